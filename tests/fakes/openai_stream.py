"""The fake OpenAI server's streamed replies, as the real API sends them.

Server-sent events, one `data: {chunk}` per event and `data: [DONE]` at the end. The first
chunk carries the role and an empty content; content follows a few characters at a time; each
tool call starts with a chunk holding its index, id, type, name and empty arguments, and its
arguments follow in pieces; a chunk with the finish reason and an empty delta closes the
choice; when the request asked for it (`stream_options.include_usage`), a last chunk has no
choices and the usage (every other chunk then has `"usage": null`). A turn can also hold the
stream open after some chunks (a gate), drop the connection, or send a line that is no JSON.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from aiohttp import web

if TYPE_CHECKING:
    from tests.fakes.openai_server import RecordedRequest, Reply


def chunks_of(completion: dict[str, Any], size: int, with_usage: bool) -> Iterator[dict[str, Any]]:
    """The chunks of `completion` (a whole chat.completion), in order."""
    base = {"id": completion["id"], "object": "chat.completion.chunk", "created": completion["created"],
            "model": completion["model"], "system_fingerprint": None}
    extra = {"usage": None} if with_usage else {}
    choice = completion["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}], **extra}

    yield chunk({"role": "assistant", "content": "", "refusal": None})
    content = message.get("content") or ""
    for i in range(0, len(content), size):
        yield chunk({"content": content[i:i + size]})
    for index, call in enumerate(message.get("tool_calls") or ()):
        fn = call["function"]
        yield chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                     "function": {"name": fn["name"], "arguments": ""}}]})
        args = fn["arguments"]
        for i in range(0, len(args), size):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": args[i:i + size]}}]})
    yield chunk({}, choice["finish_reason"])
    if with_usage:
        yield {**base, "choices": [], "usage": completion["usage"]}


async def stream_completion(
    request: web.Request, rec: RecordedRequest, completion: dict[str, Any], turn: Reply,
    gate: Callable[[str], asyncio.Event],
) -> web.StreamResponse:
    options = rec.body.get("stream_options") or {}
    with_usage = bool(options.get("include_usage")) and turn.send_usage
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream; charset=utf-8",
                                           "Cache-Control": "no-cache"})
    await response.prepare(request)
    try:
        await _write_chunks(request, rec, response, completion, turn, gate, with_usage)
    except asyncio.CancelledError:  # the client went away mid-stream (a stopped run): the turn is spent
        rec.outcome = "disconnected"
        raise
    return response


async def _write_chunks(
    request: web.Request, rec: RecordedRequest, response: web.StreamResponse, completion: dict[str, Any],
    turn: Reply, gate: Callable[[str], asyncio.Event], with_usage: bool,
) -> None:
    for sent, item in enumerate(chunks_of(completion, max(1, turn.chunk_chars), with_usage)):
        if turn.cut_after is not None and sent >= turn.cut_after:
            if request.transport is not None:
                request.transport.abort()
            return
        if turn.garbage_after is not None and sent >= turn.garbage_after:
            await response.write(b"data: {not json, the model server broke\n\n")
            await response.write_eof()
            return
        if turn.hold_after is not None and sent == turn.hold_after and turn.hold_gate:
            await gate(turn.hold_gate).wait()
        await response.write(f"data: {json.dumps(item, ensure_ascii=False)}\n\n".encode())
        if rec.first_chunk_at is None and any(c["delta"].get("content") for c in item["choices"]):
            rec.first_chunk_at = time.monotonic()  # the first text the model wrote (benchmarks time from it)
        if turn.chunk_gap_ms:
            await asyncio.sleep(turn.chunk_gap_ms / 1000)
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
