"""The LLM client: one object per model configuration, built by the entry point and passed down.

It holds no token totals (callers pass the session's `TokenUsage`) and no process-wide state.
Each call: format the messages (llm_request.py), check the request against the context window
(`TokenLimitExceeded`, before anything is sent), send it (llm_connection.py), retry transient
faults only (llm_retry.py: connection errors, timeouts, 429, 5xx; `Retry-After` honoured), then
strip `<think>` and recover tool calls written as text. Callers see the typed errors of
agent_core.errors, never openai's (llm_faults.py reads which fault it was).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import Any, NoReturn, Protocol

import openai
from openai.types.chat import ChatCompletion
from opentelemetry.trace import INVALID_SPAN, Span, Tracer
from opentelemetry.util.types import AttributeValue

from agent_core.errors import (
    LLMError,
    LLMStreamBroken,
    LLMUnavailable,
    TokenLimitExceeded,
)
from agent_core.llm_config import LLMConfig
from agent_core.llm_connection import ModelConnection, Opened, Unreadable
from agent_core.llm_faults import MODEL_FAULTS, error_detail, fault_kind, is_transient, typed_error
from agent_core.llm_reply import (
    assistant_turn,
    streamed_reply_calls,
    streamed_reply_tokens,
    whole_reply_calls,
    whole_reply_tokens,
)
from agent_core.llm_request import add_images, format_messages, request_body
from agent_core.llm_retry import GaveUp, model_retry_policy
from agent_core.llm_spans import annotate, annotate_failed, request_attributes
from agent_core.llm_stream import StreamAssembler
from agent_core.model import TokenUsage, ToolChoice
from agent_core.schema import Message
from agent_core.text_tool_calls import strip_answer_tags, strip_think
from agent_core.tokens import TokenCounter
from agent_core.tracing import span
from agent_core.visible_stream import VisibleStream

log = logging.getLogger(__name__)


class LLMObserver(Protocol):
    """Hooks for metrics (bot/ implements them; agent_core does not import bot)."""

    def on_call(self, seconds: float, prompt_tokens: int, completion_tokens: int) -> None:
        """A call succeeded; `seconds` is its wall time including any retries."""

    def on_error(self, kind: str) -> None:
        """An attempt failed. kind: connection, timeout, rate_limit, server, rejected,
        token_limit, unavailable (the last after retries ran out)."""


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
        self._connection = ModelConnection(config)
        self._retrying = model_retry_policy(config)

    async def aclose(self) -> None:
        await self._connection.aclose()

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
        return assistant_turn(raw.content, whole_reply_calls(raw), tools, tool_choice)

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
        kwargs = request_body(self.config, formatted, tool_list, tool_choice if tool_list else None)
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
        outcome: Opened | Unreadable | GaveUp = await self._retrying(self._open_stream, kwargs, failures)
        if isinstance(outcome, GaveUp):
            annotate_failed(current, failures, outcome.error)
            self._raise_typed(outcome.error, needed, outcome.attempts, usage)
        if isinstance(outcome, Unreadable):
            annotate_failed(current, failures, outcome.detail)
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
                except MODEL_FAULTS as exc:  # a dropped connection, an error event
                    raise self._broken(self._connection.fault(exc), len(visible.shown), current, failures, usage) from None
                except ValueError as exc:  # garbage
                    raise self._broken(exc, len(visible.shown), current, failures, usage) from None
        finally:
            await stream.close()  # also when the run is cancelled: the model stops writing
        try:
            reply = assembler.result()
        except LLMStreamBroken:
            self._error("unavailable", usage)
            raise
        prompt, completion = streamed_reply_tokens(reply, needed, self.counter)
        seconds = self._count(prompt, completion, started, usage)
        annotate(current, prompt, completion, seconds, failures)
        turn = assistant_turn(reply.content, streamed_reply_calls(reply), tool_list, tool_choice)
        tail = visible.finish(strip_answer_tags(turn.content or "") if not turn.tool_calls else "")
        if tail:
            yield tail
        yield turn

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
        add_images(formatted, images, vision=self.vision)
        raw = await self._complete(formatted, None, None, usage)
        return strip_think(raw.content)

    # ------------------------------------------------------------------ formatting and counting

    def format_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """The messages in wire form (agent_core.llm_request.format_messages)."""
        return format_messages(messages, vision=self.vision)

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
        kwargs = request_body(self.config, formatted, tools, tool_choice)
        with span(self._tracer, f"chat {self.name}", self._span_attributes(stream=False)) as current:
            started = time.monotonic()
            failures: list[str] = []  # the kinds of this call's failed attempts
            outcome: ChatCompletion | GaveUp = await self._retrying(self._attempt, kwargs, failures)
            if isinstance(outcome, GaveUp):
                annotate_failed(current, failures, outcome.error)
                self._raise_typed(outcome.error, needed, outcome.attempts, usage)
            response: ChatCompletion = outcome
            if not response.choices:
                self._error("unavailable", usage)
                raise LLMUnavailable("the endpoint returned no choices", 1)
            prompt, completion = whole_reply_tokens(response, needed, self.counter)
            seconds = self._count(prompt, completion, started, usage)
            annotate(current, prompt, completion, seconds, failures)
            return response.choices[0].message

    def _span_attributes(self, *, stream: bool) -> dict[str, AttributeValue] | None:
        return request_attributes(self.name, stream=stream) if self._tracer is not None else None

    def _check_window(self, formatted: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                      usage: TokenUsage | None) -> int:
        needed = self.count_request(formatted, tools)
        limit = self.context_window - self.config.max_tokens
        if needed > limit:
            self._error("token_limit", usage)
            raise TokenLimitExceeded(needed, limit)
        return needed

    async def _open_stream(self, kwargs: dict[str, Any], failures: list[str]) -> Opened | Unreadable | openai.APIError:
        """One streamed request, up to its first chunk (what the retry policy may repeat)."""
        outcome = await self._connection.open_stream(kwargs)
        if isinstance(outcome, openai.APIError):
            failures.append(self._report(outcome))
        return outcome

    async def _attempt(self, kwargs: dict[str, Any], failures: list[str]) -> ChatCompletion | openai.APIError:
        """One request. A failure is returned, not raised: an exception kept by the retry
        policy would hold the traceback of the frame that holds it (a cycle per call)."""
        outcome = await self._connection.complete(kwargs)
        if isinstance(outcome, openai.APIError):
            failures.append(self._report(outcome))
        return outcome

    def _raise_typed(self, exc: openai.APIError, needed: int, attempts: int, usage: TokenUsage | None) -> NoReturn:
        # raised as made, never held in a local: the traceback would hold this frame, and so a cycle
        raise self._counted(typed_error(exc, needed, self.context_window, attempts), usage) from None

    def _counted(self, error: LLMError, usage: TokenUsage | None) -> LLMError:
        # a rejected request or an overflow was counted as its attempt's kind already
        self._error("unavailable" if isinstance(error, LLMUnavailable) else None, usage)
        return error

    def _count(self, prompt: int, completion: int, started: float, usage: TokenUsage | None) -> float:
        """A call that answered, into the session's totals and the metrics; its seconds."""
        seconds = time.monotonic() - started
        if usage is not None:
            usage.add(prompt, completion)
        if self._observer is not None:
            self._observer.on_call(seconds, prompt, completion)
        return seconds

    def _broken(self, exc: Exception, shown: int, current: Span, failures: list[str],
                usage: TokenUsage | None) -> LLMStreamBroken:
        annotate_failed(current, failures, exc)
        self._error("unavailable", usage)
        return LLMStreamBroken(error_detail(exc), shown)

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
