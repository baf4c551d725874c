"""The LLM client: one object per model configuration, built by bot.py and passed down.

It holds no token totals (callers pass the session's `TokenUsage`) and no process-wide state.
Each call: format the messages (images as `image_url` parts for vision models, dropped with a
note otherwise), check the request against the context window (`TokenLimitExceeded`, before
anything is sent), send it, retry transient faults only (connection errors, timeouts, 429,
5xx; `Retry-After` honoured), then strip `<think>` and recover tool calls written as text.
Callers see the typed errors of agent_core.errors, never openai's.

Retries are tenacity's, with one long-lived `AsyncRetrying` per client (the policy: transient
faults, `max_retries` more attempts, our backoff and Retry-After cap), called once per model
call. A retry object made per call is a reference cycle (it holds bound methods of itself), and
so is an exception stored with the traceback of the frame that holds it: every model call then
left garbage that only the collector's rare full passes free, and a thousand waiting
conversations grew the process. So the attempt returns a failure as a value (never raises into
tenacity), and the one retry object lives as long as the client: a call leaves nothing behind
(tests/test_memory_cycles.py). The SDK's own retries are off; see README, "Model retries", for
the measurement that chose tenacity over them.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, Protocol

import openai
from openai.types.chat import ChatCompletion
from opentelemetry.trace import INVALID_SPAN, Span, Status, StatusCode, Tracer
from opentelemetry.util.types import AttributeValue
from tenacity import AsyncRetrying, RetryCallState, retry_if_result

from agent_core.errors import (
    LLMRequestRejected,
    LLMStreamBroken,
    LLMUnavailable,
    TokenLimitExceeded,
)
from agent_core.llm_config import LLMConfig, is_reasoning_model
from agent_core.llm_faults import (
    context_overflow_numbers,
    error_detail,
    fault_kind,
    is_context_overflow,
    is_transient,
    retry_delay,
)
from agent_core.llm_stream import StreamAssembler, StreamedReply
from agent_core.model import TokenUsage, ToolChoice
from agent_core.schema import Function, Message, Role, ToolCall
from agent_core.text_tool_calls import recover_tool_calls, strip_answer_tags, strip_think
from agent_core.tokens import TokenCounter
from agent_core.tool_output import quote_tool_output
from agent_core.tracing import span
from agent_core.visible_stream import VisibleStream

log = logging.getLogger(__name__)

_NO_IMAGE_NOTE = "[an image was attached here; this model cannot see images, so it was left out]"


class LLMObserver(Protocol):
    """Hooks for metrics (bot/ implements them; agent_core does not import bot)."""

    def on_call(self, seconds: float, prompt_tokens: int, completion_tokens: int) -> None:
        """A call succeeded; `seconds` is its wall time including any retries."""

    def on_error(self, kind: str) -> None:
        """An attempt failed. kind: connection, timeout, rate_limit, server, rejected,
        token_limit, unavailable (the last after retries ran out)."""


def _image_url(image: str | bytes) -> str:
    if isinstance(image, bytes):
        data, raw = base64.b64encode(image).decode("ascii"), image
    elif image.startswith(("http://", "https://", "data:")):
        return image
    else:
        data = image
        try:
            raw = base64.b64decode(image[:64])  # the magic bytes are all we need
        except (binascii.Error, ValueError):
            raw = b""
    mime = _mime(raw)
    return f"data:{mime};base64,{data}"


def _mime(raw: bytes) -> str:
    if raw.startswith(b"\x89PNG"):
        return "image/png"
    if raw[:3] == b"GIF":
        return "image/gif"
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return "image/webp"
    return "image/jpeg"


@dataclass(frozen=True, slots=True)
class GaveUp:
    """How a call through the retry policy ended without a response: the last error, and how
    many attempts were made."""

    error: openai.APIError
    attempts: int


def model_retry_policy(config: LLMConfig) -> AsyncRetrying:
    """The one retry object of a client: attempts return their failure as a value (an
    openai.APIError); transient ones are retried up to `max_retries` times, with the server's
    Retry-After (capped) or exponential backoff with jitter in between. Every way of stopping
    ends in a GaveUp. Its callbacks close over the config only: no cycle back to the client."""

    def failed(outcome: object) -> bool:
        return isinstance(outcome, openai.APIError)

    def give_up(state: RetryCallState) -> bool:
        error = state.outcome.result() if state.outcome is not None else None
        return state.attempt_number > config.max_retries or not is_transient(error)  # type: ignore[arg-type]

    def wait(state: RetryCallState) -> float:
        error = state.outcome.result() if state.outcome is not None else None
        return retry_delay(state.attempt_number, error, config.backoff_base_s, config.backoff_cap_s,  # type: ignore[arg-type]
                           config.retry_after_cap_s)

    def gave_up(state: RetryCallState) -> GaveUp:
        assert state.outcome is not None
        return GaveUp(state.outcome.result(), state.attempt_number)

    return AsyncRetrying(retry=retry_if_result(failed), stop=give_up, wait=wait, retry_error_callback=gave_up,
                         sleep=asyncio.sleep)


@dataclass(frozen=True, slots=True)
class _Opened:
    """A stream whose first chunk arrived: from here on, nothing is retried."""

    stream: openai.AsyncStream[object]
    first: object


@dataclass(frozen=True, slots=True)
class _Unreadable:
    """A stream that opened but whose first chunk was no chunk (or none came): not retried."""

    detail: str


class LLM:
    """An OpenAI-compatible chat model. Implements agent_core.model.ChatModel."""

    def __init__(
        self,
        config: LLMConfig,
        *,
        observer: LLMObserver | None = None,
        counter: TokenCounter | None = None,
        tracer: Tracer | None = None,
    ) -> None:
        self.config = config
        self.name = config.model
        self.vision = bool(config.vision)
        self.context_window = config.context_window
        self.counter = counter or TokenCounter(config.model)
        self._observer = observer
        self._tracer = tracer  # a span per model call; None: tracing off
        # Retries are ours (typed, transient-only, observed), so the SDK's own are off. The
        # SDK's own HTTP client: an aiohttp transport of ours saved about 1 ms of CPU per call
        # with 50 in flight, on calls that take one to thirty seconds; not worth a module.
        self._client = openai.AsyncOpenAI(api_key=config.api_key, base_url=config.base_url,
                                          timeout=config.timeout_s, max_retries=0)
        self._retrying = model_retry_policy(config)

    async def aclose(self) -> None:
        await self._client.close()

    # ------------------------------------------------------------------ public calls

    async def ask_tool(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: ToolChoice = "auto",
        usage: TokenUsage | None = None,
    ) -> Message:
        """One assistant turn, tool calls included (recovered from text where written there)."""
        tools = list(tools) if tools else None
        raw = await self._complete(self.format_messages(messages), tools, tool_choice if tools else None, usage)
        calls = [
            ToolCall(id=tc.id, function=Function(name=tc.function.name, arguments=tc.function.arguments or "{}"))
            for tc in (raw.tool_calls or ())
            if tc.type == "function"
        ]
        return self._turn(raw.content, calls, tools, tool_choice)

    async def stream_tool(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: ToolChoice = "auto",
        usage: TokenUsage | None = None,
    ) -> AsyncIterator[str | Message]:
        """`ask_tool`, streamed (agent_core.model.StreamingChatModel): the visible text in
        pieces, then the turn. Faults before the first chunk are retried as for any call; after
        it, any fault is LLMStreamBroken (a second reply would not continue the first). With
        streaming off (LLMConfig.stream) the turn comes whole, with no pieces before it."""
        if not self.config.stream:
            yield await self.ask_tool(messages, tools=tools, tool_choice=tool_choice, usage=usage)
            return
        tool_list = list(tools) if tools else None
        formatted = self.format_messages(messages)
        needed = self._check_window(formatted, tool_list, usage)
        kwargs = self._request_kwargs(formatted, tool_list, tool_choice if tool_list else None)
        kwargs["stream"] = True
        kwargs["stream_options"] = {"include_usage": True}
        # started, not made current: a generator's caller runs between its pieces, and must not
        # see it; its parent is the span current when the stream began (the run segment)
        current: Span = self._tracer.start_span(f"chat {self.name}", attributes=self._span_attributes(stream=True)) \
            if self._tracer else INVALID_SPAN
        try:
            async with contextlib.aclosing(self._stream(kwargs, needed, tool_list, tool_choice, usage, current)) as items:
                async for item in items:
                    yield item
        finally:
            current.end()

    async def _stream(
        self, kwargs: dict[str, Any], needed: int, tool_list: list[dict[str, Any]] | None, tool_choice: ToolChoice,
        usage: TokenUsage | None, current: Span,
    ) -> AsyncGenerator[str | Message, None]:
        started = time.monotonic()
        failures: list[str] = []  # the kinds of this call's failed attempts
        outcome: _Opened | _Unreadable | GaveUp = await self._retrying(self._open_stream, kwargs, failures)
        if isinstance(outcome, GaveUp):
            _annotate_failed(current, failures, outcome.error)
            self._raise_typed(outcome.error, needed, outcome.attempts, usage)
        if isinstance(outcome, _Unreadable):
            _annotate_failed(current, failures, outcome.detail)
            self._error("unavailable", usage)
            raise LLMStreamBroken(outcome.detail, 0)
        assembler, visible = StreamAssembler(), VisibleStream()
        stream, chunk = outcome.stream, outcome.first
        try:
            while True:
                piece = visible.feed(assembler.add(chunk))
                if piece:
                    yield piece
                try:
                    chunk = await stream.__anext__()
                except StopAsyncIteration:
                    break
                except (openai.APIError, ValueError) as exc:  # a dropped connection, an error event, garbage
                    _annotate_failed(current, failures, exc)
                    self._error("unavailable", usage)
                    raise LLMStreamBroken(error_detail(exc), len(visible.shown)) from None
        finally:
            await stream.close()  # also when the run is cancelled: the model stops writing
        try:
            reply = assembler.result()
        except LLMStreamBroken:
            self._error("unavailable", usage)
            raise
        prompt, completion, seconds = self._count_stream(reply, needed, usage, started)
        _annotate(current, prompt, completion, seconds, failures)
        calls = [ToolCall(id=c.id, function=Function(name=c.name, arguments=c.arguments)) for c in reply.calls]
        turn = self._turn(reply.content, calls, tool_list, tool_choice)
        tail = visible.finish(strip_answer_tags(turn.content or "") if not turn.tool_calls else "")
        if tail:
            yield tail
        yield turn

    def _turn(self, raw_content: str | None, calls: list[ToolCall], tools: list[dict[str, Any]] | None,
              tool_choice: ToolChoice) -> Message:
        content = strip_think(raw_content)
        if not calls and tools and tool_choice != "none":
            offered = {t["function"]["name"] for t in tools if isinstance(t.get("function"), dict)}
            recovered = recover_tool_calls(content, offered)
            content, calls = recovered.content, recovered.calls
        return Message.assistant(content or None, calls or None)

    async def ask(self, messages: Sequence[Message], *, usage: TokenUsage | None = None) -> str:
        """A plain text reply, think blocks removed."""
        raw = await self._complete(self.format_messages(messages), None, None, usage)
        return strip_think(raw.content)

    async def ask_with_images(
        self,
        messages: Sequence[Message],
        images: Sequence[str | bytes],
        *,
        usage: TokenUsage | None = None,
    ) -> str:
        """Like `ask`, with images (base64 text, raw bytes, or URLs) added to the last user turn."""
        formatted = self.format_messages(messages)
        if images:
            if not formatted or formatted[-1]["role"] != "user":
                formatted.append({"role": "user", "content": ""})
            last = formatted[-1]
            parts = self._as_parts(last["content"])
            if self.vision:
                parts.extend({"type": "image_url", "image_url": {"url": _image_url(i)}} for i in images)
            else:
                parts.append({"type": "text", "text": _NO_IMAGE_NOTE})
            last["content"] = parts
        raw = await self._complete(formatted, None, None, usage)
        return strip_think(raw.content)

    # ------------------------------------------------------------------ formatting and counting

    def format_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """Wire form. The API takes images in user turns only, so an image on another turn is
        sent in a user turn placed after it (after the whole run of tool results, which must
        stay right behind their assistant turn)."""
        out: list[dict[str, Any]] = []
        held: list[dict[str, Any]] = []
        for msg in messages:
            if held and msg.role is not Role.TOOL:
                out.append({"role": "user", "content": held})
                held = []
            wire = msg.to_openai()
            if msg.role is Role.TOOL:  # quoted, under the fixed line that it is untrusted data
                wire["content"] = quote_tool_output(msg.name, wire["content"])
            if msg.base64_image:
                if not self.vision:
                    wire["content"] = f"{wire.get('content') or ''}\n{_NO_IMAGE_NOTE}".strip()
                else:
                    part = {"type": "image_url", "image_url": {"url": _image_url(msg.base64_image)}}
                    if msg.role is Role.USER:
                        wire["content"] = [*self._as_parts(wire["content"]), part]
                    else:
                        held.extend([{"type": "text", "text": f"(image from the {msg.role.value} turn above)"}, part])
            out.append(wire)
        if held:
            out.append({"role": "user", "content": held})
        return out

    @staticmethod
    def _as_parts(content: object) -> list[dict[str, Any]]:
        if isinstance(content, list):
            return list(content)
        return [{"type": "text", "text": content}] if content else []

    def count_request(self, formatted: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] | None) -> int:
        return self.counter.count_messages(formatted) + self.counter.count_tools(tools)

    # ------------------------------------------------------------------ the call

    async def _complete(
        self,
        formatted: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        tool_choice: str | None,
        usage: TokenUsage | None,
    ) -> Any:
        needed = self._check_window(formatted, tools, usage)
        kwargs = self._request_kwargs(formatted, tools, tool_choice)
        with span(self._tracer, f"chat {self.name}", self._span_attributes(stream=False)) as current:
            started = time.monotonic()
            failures: list[str] = []  # the kinds of this call's failed attempts
            outcome: ChatCompletion | GaveUp = await self._retrying(self._attempt, kwargs, failures)
            if isinstance(outcome, GaveUp):
                _annotate_failed(current, failures, outcome.error)
                self._raise_typed(outcome.error, needed, outcome.attempts, usage)
            response: ChatCompletion = outcome
            if not response.choices:
                self._error("unavailable", usage)
                raise LLMUnavailable("the endpoint returned no choices", 1)
            prompt, completion = self._usage_of(response, needed)
            seconds = time.monotonic() - started
            if usage is not None:
                usage.add(prompt, completion)
            if self._observer is not None:
                self._observer.on_call(seconds, prompt, completion)
            _annotate(current, prompt, completion, seconds, failures)
            return response.choices[0].message

    def _span_attributes(self, *, stream: bool) -> dict[str, AttributeValue] | None:
        if self._tracer is None:
            return None
        return {"gen_ai.operation.name": "chat", "gen_ai.request.model": self.name, "llm.stream": stream}

    def _check_window(self, formatted: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                      usage: TokenUsage | None) -> int:
        needed = self.count_request(formatted, tools)
        limit = self.context_window - self.config.max_tokens
        if needed > limit:
            self._error("token_limit", usage)
            raise TokenLimitExceeded(needed, limit)
        return needed

    async def _open_stream(self, kwargs: dict[str, Any], failures: list[str]) -> _Opened | _Unreadable | openai.APIError:
        """One streamed request, up to its first chunk (what the retry policy may repeat)."""
        try:
            # chunks stay the decoded JSON: building a model object per chunk cost about a
            # millisecond each, which 500 streams at once turned into queues (benchmarks/bench_first_token.py)
            stream = await self._client.post("/chat/completions", body=kwargs, cast_to=ChatCompletion, stream=True,
                                             stream_cls=openai.AsyncStream[object])
        except openai.APIError as exc:
            failures.append(self._report(exc))
            return exc
        try:
            return _Opened(stream, await stream.__anext__())
        except openai.APIError as exc:
            await stream.close()
            failures.append(self._report(exc))
            return exc
        except StopAsyncIteration:
            await stream.close()
            return _Unreadable("the stream ended before its first chunk")
        except ValueError as exc:
            await stream.close()
            return _Unreadable(f"the stream's first chunk is unreadable ({exc})")

    def _count_stream(
        self, reply: StreamedReply, needed: int, usage: TokenUsage | None, started: float
    ) -> tuple[int, int, float]:
        if reply.prompt_tokens is not None:
            prompt, completion = reply.prompt_tokens, reply.completion_tokens or 0
        else:  # the endpoint sent no usage: our own count
            prompt = needed
            completion = self.counter.count_text(reply.content) + sum(
                self.counter.count_text(c.arguments) for c in reply.calls)
        seconds = time.monotonic() - started
        if usage is not None:
            usage.add(prompt, completion)
        if self._observer is not None:
            self._observer.on_call(seconds, prompt, completion)
        return prompt, completion, seconds

    async def _attempt(self, kwargs: dict[str, Any], failures: list[str]) -> ChatCompletion | openai.APIError:
        """One request. A failure is returned, not raised: an exception kept by the retry
        policy would hold the traceback of the frame that holds it (a cycle per call)."""
        try:
            # The wire dicts are final: the SDK's documented low-level post skips its
            # recursive parameter transform, which cost more CPU than the call.
            return await self._client.post("/chat/completions", body=kwargs, cast_to=ChatCompletion)
        except openai.APIError as exc:
            failures.append(self._report(exc))
            return exc

    def _raise_typed(self, exc: openai.APIError, needed: int, attempts: int, usage: TokenUsage | None) -> NoReturn:
        if isinstance(exc, openai.APIStatusError):
            if is_context_overflow(exc):
                self._error(None, usage)
                needed_by_server, limit_by_server = context_overflow_numbers(exc) or (needed, self.context_window)
                raise TokenLimitExceeded(needed_by_server, limit_by_server) from None
            if is_transient(exc):
                self._error("unavailable", usage)
                raise LLMUnavailable(error_detail(exc), attempts, exc.status_code) from None
            self._error(None, usage)
            raise LLMRequestRejected(exc.status_code, error_detail(exc)) from None
        # connection errors, timeouts, unreadable responses
        self._error("unavailable", usage)
        detail = f"{type(exc).__name__}: {exc}" if isinstance(exc, openai.APIConnectionError) else error_detail(exc)
        raise LLMUnavailable(detail, attempts) from None

    def _request_kwargs(
        self, formatted: list[dict[str, Any]], tools: list[dict[str, Any]] | None, tool_choice: str | None
    ) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.config.model, "messages": formatted}
        reasoning = is_reasoning_model(self.config.model)
        kwargs["max_completion_tokens" if reasoning else "max_tokens"] = self.config.max_tokens
        if self.config.temperature is not None and not reasoning:
            kwargs["temperature"] = self.config.temperature
        if tools:
            kwargs["tools"] = tools
            if tool_choice is not None:
                kwargs["tool_choice"] = tool_choice
        return kwargs

    def _usage_of(self, response: Any, prompt_estimate: int) -> tuple[int, int]:
        reported = getattr(response, "usage", None)
        if reported is not None and reported.prompt_tokens is not None:
            return int(reported.prompt_tokens), int(reported.completion_tokens or 0)
        message = response.choices[0].message
        completion = self.counter.count_text(message.content) + sum(
            self.counter.count_text(tc.function.arguments) for tc in (message.tool_calls or ()) if tc.type == "function"
        )
        return prompt_estimate, completion

    def _report(self, exc: BaseException) -> str:
        kind = fault_kind(exc)
        if is_transient(exc):
            log.warning("model call failed (%s), may retry: %s", kind, error_detail(exc))
        if self._observer is not None:
            self._observer.on_error(kind)
        return kind

    def _error(self, kind: str | None, usage: TokenUsage | None) -> None:
        if usage is not None:
            usage.errors += 1
        if kind is not None and self._observer is not None:
            self._observer.on_error(kind)



def _annotate(current: Span, prompt: int, completion: int, seconds: float, failures: list[str]) -> None:
    """A model call's span, once it answered: tokens, latency, attempts (a failed one is an event)."""
    if not current.is_recording():
        return
    for kind in failures:
        current.add_event("attempt failed", {"error.type": kind})
    current.set_attributes({
        "gen_ai.usage.input_tokens": prompt, "gen_ai.usage.output_tokens": completion,
        "llm.latency_ms": round(seconds * 1000, 1), "llm.attempts": 1 + len(failures),
    })


def _annotate_failed(current: Span, failures: list[str], error: object) -> None:
    if not current.is_recording():
        return
    for kind in failures:
        current.add_event("attempt failed", {"error.type": kind})
    current.set_attribute("llm.attempts", max(1, len(failures)))
    current.set_status(Status(StatusCode.ERROR, str(error)[:200]))
