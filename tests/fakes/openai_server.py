"""A fake OpenAI-compatible Chat Completions server, as strict as the real API.

In-process (async tests)::

    async with FakeOpenAI([reply(tool_calls=[call("ask_human", {"inquire": "When?"})]),
                           reply("Done")]) as fake:
        client = AsyncOpenAI(base_url=fake.base_url, api_key="sk-test")
        ...
        fake.assert_complete()

As a process (the bot under test talks to it over HTTP)::

    python -m tests.fakes.openai_server --port 0 --script script.json [--latency-ms 5]

prints one JSON line ``{"port": ..., "base_url": ...}`` once it listens. The script file holds
either a list of turns (the default conversation) or ``{"scripts": {key: [turns]}}``. Named
gates (``"gate": "g1"`` in a turn) are released with ``POST /_fake/gates/g1``;
``GET /_fake/state`` reports the remaining turns and the request count.

Turns are served in order per conversation. The conversation key comes from the first user
message (``[conv:KEY]`` by default, or a `keyer` callable); a key without a script of its own
uses the default script (key ``""``). When no scripted turn is left, `responder` (if any)
produces the reply. A turn held by latency or a gate is put back at the head of its script
when the client disconnects meanwhile, so a killed-and-restarted bot is served it again.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import math
import sys
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from tests.fakes.openai_stream import stream_completion
from tests.fakes.openai_validation import (
    DEFAULT_KEY,
    Rejected,
    conv_marker_key,
    rough_tokens,
    text_of,
    validate_request,
)
from tests.fakes.process import serve_until_signalled

# ---------------------------------------------------------------------------- script items


class Usage(BaseModel):
    prompt_tokens: int
    completion_tokens: int


class ToolCallSpec(BaseModel):
    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    id: str | None = None

    def wire(self) -> dict[str, Any]:
        args = self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments, ensure_ascii=False)
        return {
            "id": self.id or f"call_{uuid.uuid4().hex[:24]}",
            "type": "function",
            "function": {"name": self.name, "arguments": args},
        }


class Reply(BaseModel):
    """One scripted assistant turn."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    kind: Literal["reply"] = "reply"
    content: str | None = None
    tool_calls: list[ToolCallSpec] = Field(default_factory=list)
    usage: Usage | None = None
    finish_reason: str | None = None
    latency_ms: float | None = None
    gate: asyncio.Event | str | None = None
    # streaming (a request with "stream": true); chunks are counted from 1, the role chunk first
    chunk_chars: int = 8  # content and tool-call arguments arrive this many characters at a time
    chunk_gap_ms: float = 0.0
    hold_after: int | None = None  # after this many chunks, wait for `hold_gate` (a model still writing)
    hold_gate: str | None = None
    cut_after: int | None = None  # after this many chunks the connection drops: no finish, no [DONE]
    garbage_after: int | None = None  # after this many chunks, a data line that is no JSON
    send_usage: bool = True  # the usage chunk, when the request asked for it


class Fault(BaseModel):
    """One scripted failure: an HTTP status, a dropped connection, or a request that never ends."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    kind: Literal["fault"] = "fault"
    action: Literal["status", "drop", "hang"] = "status"
    status: int = 500
    message: str = "The server had an error while processing your request."
    code: str | None = None
    retry_after: float | None = None  # Retry-After header, seconds
    retry_after_ms: float | None = None  # retry-after-ms header
    latency_ms: float | None = None
    gate: asyncio.Event | str | None = None


Turn = Reply | Fault
Responder = Callable[["RecordedRequest"], "Turn | Awaitable[Turn]"]
Keyer = Callable[[list[dict[str, Any]]], str]


def call(name: str, arguments: Mapping[str, Any] | str | None = None, *, id: str | None = None) -> ToolCallSpec:
    args: dict[str, Any] | str = dict(arguments) if isinstance(arguments, Mapping) else (arguments or {})
    return ToolCallSpec(name=name, arguments=args, id=id)


def reply(
    content: str | None = None,
    *,
    tool_calls: Iterable[ToolCallSpec] = (),
    usage: tuple[int, int] | None = None,
    latency_ms: float | None = None,
    gate: asyncio.Event | str | None = None,
    **streaming: Any,
) -> Reply:
    return Reply(
        content=content,
        tool_calls=list(tool_calls),
        usage=Usage(prompt_tokens=usage[0], completion_tokens=usage[1]) if usage else None,
        latency_ms=latency_ms,
        gate=gate,
        **streaming,
    )


def fault(
    status: int,
    *,
    retry_after: float | None = None,
    retry_after_ms: float | None = None,
    message: str | None = None,
    code: str | None = None,
) -> Fault:
    return Fault(
        status=status,
        retry_after=retry_after,
        retry_after_ms=retry_after_ms,
        message=message or f"fake error {status}",
        code=code,
    )


def drop() -> Fault:
    return Fault(action="drop")


def hang() -> Fault:
    return Fault(action="hang")


class ScriptFile(BaseModel):
    scripts: dict[str, list[Reply | Fault]] = Field(default_factory=dict)


def load_script_file(path: Path) -> dict[str, list[Turn]]:
    raw = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(raw, list):
        raw = {"scripts": {DEFAULT_KEY: raw}}
    return dict(ScriptFile.model_validate(raw).scripts)


# ---------------------------------------------------------------------------- records


Outcome = Literal["pending", "served", "fault", "rejected", "disconnected", "exhausted"]


@dataclass
class RecordedRequest:
    """One request as received, for assertions."""

    key: str
    body: dict[str, Any]
    headers: dict[str, str]
    received_at: float
    status: int = 0
    outcome: Outcome = "pending"
    turn: Turn | None = None
    error: dict[str, Any] | None = None
    first_chunk_at: float | None = None  # monotonic: a streamed reply's first content chunk was written

    @property
    def messages(self) -> list[dict[str, Any]]:
        msgs = self.body.get("messages")
        return msgs if isinstance(msgs, list) else []

    def tool_results(self) -> dict[str, str]:
        """tool_call_id -> content of every tool message sent back."""
        return {
            str(m.get("tool_call_id")): text_of(m.get("content"))
            for m in self.messages
            if isinstance(m, dict) and m.get("role") == "tool"
        }

    def tool_names(self) -> list[str]:
        tools = self.body.get("tools") or []
        return [t["function"]["name"] for t in tools if isinstance(t, dict) and "function" in t]


class FakeScriptIncomplete(AssertionError):
    pass


# ---------------------------------------------------------------------------- the server


class FakeOpenAI:
    """The fake server. See the module docstring."""

    def __init__(
        self,
        script: Iterable[Turn] | None = None,
        *,
        scripts: Mapping[str, Iterable[Turn]] | None = None,
        keyer: Keyer = conv_marker_key,
        responder: Responder | None = None,
        api_key: str | None = None,
        context_limit: int = 128_000,
        latency_ms: float = 0.0,
        record: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self._scripts: dict[str, deque[Turn]] = {k: deque(v) for k, v in (scripts or {}).items()}
        if script is not None:
            self._scripts.setdefault(DEFAULT_KEY, deque()).extend(script)
        self._keyer = keyer
        self._responder = responder
        self._api_key = api_key
        self.context_limit = context_limit
        self.latency_ms = latency_ms
        self._host = host
        self._port = port
        self._named_gates: dict[str, asyncio.Event] = {}
        self._closing = asyncio.Event()
        self._changed = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self._record = record  # benchmarks with thousands of conversations turn this off
        self.requests: list[RecordedRequest] = []
        self.request_count = 0
        self.exhausted_count = 0  # requests that found no scripted turn and no responder
        self.port = 0

    # -- lifecycle

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self.port}/v1"

    async def start(self) -> FakeOpenAI:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/_fake/gates/{name}", self._release_gate)
        app.router.add_get("/_fake/state", self._state)
        # handler_cancellation: a client that goes away cancels the handler, which is how a held
        # turn learns that it must be put back.
        self._runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self._host, self._port)
        await site.start()
        self.port = int(self._runner.addresses[0][1])
        return self

    async def close(self) -> None:
        self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeOpenAI:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- scripting and assertions

    def add(self, *turns: Turn, key: str = DEFAULT_KEY) -> None:
        self._scripts.setdefault(key, deque()).extend(turns)

    def gate(self, name: str) -> asyncio.Event:
        return self._named_gates.setdefault(name, asyncio.Event())

    def remaining(self) -> dict[str, int]:
        return {k: len(v) for k, v in self._scripts.items() if v}

    def served(self, key: str | None = None) -> list[RecordedRequest]:
        return [r for r in self.requests if r.outcome in ("served", "fault") and (key is None or r.key == key)]

    def assert_complete(self) -> None:
        left = self.remaining()
        if left or self.exhausted_count:
            raise FakeScriptIncomplete(
                f"scripted turns left unused: {left}; requests that found no turn: {self.exhausted_count}"
            )

    async def wait_for(self, predicate: Callable[[FakeOpenAI], bool], within: float = 5.0) -> None:
        """Wait until `predicate(fake)` holds; it is re-checked whenever a request arrives or ends."""
        async with asyncio.timeout(within), self._changed:
            await self._changed.wait_for(lambda: predicate(self))

    async def wait_for_requests(self, count: int, within: float = 5.0) -> None:
        """Wait until at least `count` requests have arrived (any outcome)."""
        await self.wait_for(lambda f: f.request_count >= count, within)

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    # -- handlers

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        # stamped once the whole request is in (a body the client is slow to write is the
        # client's time) and before it is parsed and checked: that work is the server's, as a
        # real model server's parsing is part of its latency
        received_at = time.monotonic()
        try:
            body: object = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            body = None
        rec = RecordedRequest(
            key=DEFAULT_KEY,
            body=body if isinstance(body, dict) else {},
            headers=dict(request.headers),
            received_at=received_at,
        )
        self.request_count += 1
        if self._record:
            self.requests.append(rec)
        await self._notify()
        try:
            self._check_auth(request)
            validate_request(body, self.context_limit)
            rec.key = self._keyer(rec.messages)
            return await self._serve(request, rec)
        except Rejected as exc:
            return self._reject(rec, exc)
        finally:
            await asyncio.shield(self._notify())

    def _check_auth(self, request: web.Request) -> None:
        header = request.headers.get("Authorization", "")
        token = header[7:].strip() if header.startswith("Bearer ") else ""
        if not token or (self._api_key is not None and token != self._api_key):
            raise Rejected(401, "Incorrect API key provided.", code="invalid_api_key")

    def _reject(self, rec: RecordedRequest, exc: Rejected) -> web.Response:
        rec.outcome, rec.status, rec.error = "rejected", exc.status, exc.body
        return web.json_response(exc.body, status=exc.status)

    def _queue_for(self, key: str) -> deque[Turn] | None:
        queue = self._scripts.get(key)
        if queue:
            return queue
        queue = self._scripts.get(DEFAULT_KEY)
        return queue or None

    async def _serve(self, request: web.Request, rec: RecordedRequest) -> web.StreamResponse:
        queue = self._queue_for(rec.key)
        turn: Turn
        if queue is not None:
            turn = queue.popleft()
        elif self._responder is not None:
            produced = self._responder(rec)
            turn = await produced if inspect.isawaitable(produced) else produced
            queue = None
        else:
            rec.outcome, rec.status = "exhausted", 400
            self.exhausted_count += 1
            return web.json_response(
                {"error": {"message": f"fake OpenAI: no scripted turn left for conversation {rec.key!r}",
                           "type": "fake_script_exhausted", "param": None, "code": None}},
                status=400,
            )
        rec.turn = turn
        try:
            await self._hold(turn)
        except asyncio.CancelledError:
            # The client went away while the turn was held: it was never delivered.
            if queue is not None and not (isinstance(turn, Fault) and turn.action == "hang"):
                queue.appendleft(turn)
            rec.outcome = "disconnected"
            raise
        if isinstance(turn, Fault):
            return await self._fail(request, rec, turn)
        rec.outcome, rec.status = "served", 200
        if rec.body.get("stream"):
            return await stream_completion(request, rec, self._completion(rec, turn), turn, self.gate)
        return web.json_response(self._completion(rec, turn))

    async def _hold(self, turn: Turn) -> None:
        latency = turn.latency_ms if turn.latency_ms is not None else self.latency_ms
        if latency > 0:
            await asyncio.sleep(latency / 1000)
        gate = turn.gate
        if isinstance(gate, str):
            gate = self.gate(gate)
        if gate is not None:
            await gate.wait()
        if isinstance(turn, Fault) and turn.action == "hang":
            await self._closing.wait()

    async def _fail(self, request: web.Request, rec: RecordedRequest, turn: Fault) -> web.StreamResponse:
        rec.outcome = "fault"
        if turn.action != "status":
            if request.transport is not None:
                request.transport.abort()
            raise asyncio.CancelledError  # nothing more to write on a dead connection
        headers: dict[str, str] = {}
        if turn.retry_after is not None:
            headers["Retry-After"] = f"{turn.retry_after:g}"
        if turn.retry_after_ms is not None:
            headers["retry-after-ms"] = f"{turn.retry_after_ms:g}"
        type_ = {429: "rate_limit_exceeded", 401: "invalid_request_error"}.get(turn.status, "server_error" if turn.status >= 500 else "invalid_request_error")
        rec.status = turn.status
        rec.error = {"error": {"message": turn.message, "type": type_, "param": None, "code": turn.code}}
        return web.json_response(rec.error, status=turn.status, headers=headers)

    def _completion(self, rec: RecordedRequest, turn: Reply) -> dict[str, Any]:
        calls = [tc.wire() for tc in turn.tool_calls]
        message: dict[str, Any] = {"role": "assistant", "content": turn.content, "refusal": None}
        if calls:
            message["tool_calls"] = calls
        if turn.usage is not None:
            prompt, completion = turn.usage.prompt_tokens, turn.usage.completion_tokens
        else:
            prompt = rough_tokens(rec.body)
            completion = math.ceil(len(json.dumps(message, ensure_ascii=False)) / 4)
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": rec.body.get("model"),
            "choices": [{
                "index": 0,
                "message": message,
                "finish_reason": turn.finish_reason or ("tool_calls" if calls else "stop"),
                "logprobs": None,
            }],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        }

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": []})

    async def _release_gate(self, request: web.Request) -> web.Response:
        self.gate(request.match_info["name"]).set()
        return web.json_response({"released": request.match_info["name"]})

    async def _state(self, request: web.Request) -> web.Response:
        outcomes: dict[str, int] = {}
        for r in self.requests:
            outcomes[r.outcome] = outcomes.get(r.outcome, 0) + 1
        first_chunks = {r.key: r.first_chunk_at for r in self.requests if r.first_chunk_at is not None}
        return web.json_response({"remaining": self.remaining(), "requests": self.request_count, "outcomes": outcomes,
                                  "first_chunks": first_chunks})


# ---------------------------------------------------------------------------- CLI


async def _main(args: argparse.Namespace) -> None:
    scripts = load_script_file(Path(args.script)) if args.script else {}
    fake = FakeOpenAI(scripts=scripts, api_key=args.api_key, context_limit=args.context_limit,
                      latency_ms=args.latency_ms, host=args.host, port=args.port)
    await serve_until_signalled(fake, {"port": lambda: fake.port, "base_url": lambda: fake.base_url})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A fake OpenAI-compatible chat completions server.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", help="JSON file: a list of turns, or {\"scripts\": {key: [turns]}}")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--api-key", default=None, help="accept only this bearer token (default: any)")
    parser.add_argument("--context-limit", type=int, default=128_000)
    asyncio.run(_main(parser.parse_args(argv if argv is not None else sys.argv[1:])))


if __name__ == "__main__":
    main()
