"""A streamed chat completion, put back together: content, tool calls, usage, finish reason.

Chunks carry pieces: content deltas, and tool calls by `index` whose id, name and argument
text arrive in parts (the id and name first, then the arguments a few characters at a time).
The usage comes in a last chunk with no choices when the request asked for it
(`stream_options.include_usage`); endpoints that send none leave the count to the tokenizer.

Chunks are the decoded JSON objects (dicts), read defensively: a field of the wrong type is
ignored, a chunk that is no object is unreadable. The reply is only whole when a finish reason arrived. A stream that ends without one, or that
the length limit cut in the middle of a tool call's arguments, is `LLMStreamBroken`: its tool
calls cannot be trusted, and nothing of them is run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agent_core.errors import LLMStreamBroken


@dataclass(slots=True)
class _CallParts:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class StreamedCall:
    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class StreamedReply:
    content: str
    calls: list[StreamedCall]
    finish_reason: str
    prompt_tokens: int | None
    completion_tokens: int | None


class StreamAssembler:
    def __init__(self) -> None:
        self._content: list[str] = []
        self._calls: dict[int, _CallParts] = {}
        self._finish: str | None = None
        self._usage: tuple[int, int] | None = None
        self.chunks = 0

    @property
    def content_chars(self) -> int:
        return sum(len(c) for c in self._content)

    def add(self, chunk: object) -> str:
        """Take one chunk; returns its content delta ("" when it has none)."""
        self.chunks += 1
        if not isinstance(chunk, dict):
            raise LLMStreamBroken(f"a chunk that is no object ({type(chunk).__name__})", self.content_chars)
        usage = chunk.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get("prompt_tokens"), int):
            self._usage = (usage["prompt_tokens"], int(usage.get("completion_tokens") or 0))
        text = ""
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta")
            delta = delta if isinstance(delta, dict) else {}
            piece = delta.get("content")
            if isinstance(piece, str) and piece:
                self._content.append(piece)
                text += piece
            calls = delta.get("tool_calls")
            for tc in calls if isinstance(calls, list) else ():
                self._add_call(tc)
            if choice.get("finish_reason"):
                self._finish = str(choice["finish_reason"])
        return text

    def _add_call(self, tc: Any) -> None:
        index = tc.get("index") if isinstance(tc, dict) else None
        if not isinstance(index, int):
            raise LLMStreamBroken("a tool call piece without an index", self.content_chars)
        parts = self._calls.setdefault(index, _CallParts())
        if tc.get("id"):
            parts.id = str(tc["id"])
        fn = tc.get("function")
        if isinstance(fn, dict):
            if fn.get("name"):
                parts.name += str(fn["name"])
            if fn.get("arguments"):
                parts.arguments.append(str(fn["arguments"]))

    def result(self) -> StreamedReply:
        if self._finish is None:
            raise LLMStreamBroken("the stream ended before the model finished its reply", self.content_chars)
        calls: list[StreamedCall] = []
        for index in sorted(self._calls):
            parts = self._calls[index]
            arguments = "".join(parts.arguments)
            if not parts.name or not parts.id:
                raise LLMStreamBroken(f"tool call {index} came without its id or name", self.content_chars)
            if self._finish == "length" and not _is_json(arguments):
                raise LLMStreamBroken(f"the reply was cut in the middle of the call to {parts.name}",
                                      self.content_chars)
            calls.append(StreamedCall(parts.id, parts.name, arguments or "{}"))
        prompt, completion = self._usage if self._usage is not None else (None, None)
        return StreamedReply("".join(self._content), calls, self._finish, prompt, completion)


def _is_json(text: str) -> bool:
    try:
        json.loads(text or "{}")
    except ValueError:
        return False
    return True
