"""Token counting for text, chat messages and images, without ever reaching the network.

The encodings come with the package (agent_core.encodings): a model whose encoding is shipped
(o200k_base, cl100k_base: every current OpenAI chat model) is counted exactly; any other model
is counted with cl100k_base, and the counter says once, in the log, that its counts are
estimates.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import math
import struct
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from agent_core.encodings import encoding_for
from agent_core.schema import Message

log = logging.getLogger(__name__)

# OpenAI's chat accounting: every message costs a few tokens of framing, and every reply is
# primed with a few more.
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING = 3

# OpenAI's image rule.
LOW_DETAIL_TOKENS = 85
TILE_TOKENS = 170
TILE_PX = 512
MAX_SIDE_PX = 2048
SHORT_SIDE_PX = 768

Detail = Literal["low", "high", "auto"]
_CACHE_SIZE = 1024  # bounded: a waiting conversation must not keep its texts alive here


class TokenCounter:
    """Counts tokens the way OpenAI bills them, for one model."""

    def __init__(self, model: str = "gpt-4o") -> None:
        self.model = model
        self._encoding, self.exact = encoding_for(model)
        self._message_cache: dict[int, int] = {}
        self._tool_cache: dict[int, tuple[dict[str, Any], int]] = {}
        if not self.exact:
            log.warning("token counts for %s are estimates: tiktoken does not know its encoding, "
                        "counting with cl100k_base", model)

    @property
    def encoding_name(self) -> str:
        return self._encoding.name

    def count_text(self, text: str | None) -> int:
        if not text:
            return 0
        return len(self._encoding.encode(text, disallowed_special=()))

    def count_message(self, message: Message | dict[str, Any]) -> int:
        wire = message.to_openai() if isinstance(message, Message) else message
        key = self._cache_key(message, wire)
        if key is not None:
            cached = self._message_cache.get(key)
            if cached is None:
                cached = self._count_wire(message, wire)
                if len(self._message_cache) >= _CACHE_SIZE:
                    self._message_cache.clear()
                self._message_cache[key] = cached
            return cached
        return self._count_wire(message, wire)

    @staticmethod
    def _cache_key(message: Message | dict[str, Any], wire: dict[str, Any]) -> int | None:
        # The history is re-counted before every call; the same strings come back each time
        # (their hashes are cached by Python), so a dict lookup beats re-encoding them.
        content = wire.get("content")
        if not (content is None or isinstance(content, str)):
            return None
        if isinstance(message, Message) and message.base64_image:
            return None
        calls = tuple(
            (c.get("id"), c.get("function", {}).get("name"), c.get("function", {}).get("arguments"))
            for c in wire.get("tool_calls") or ()
        )
        # The hash, not the tuple: the cache must not keep a parked conversation's texts alive.
        return hash((wire.get("role"), content, wire.get("name"), wire.get("tool_call_id"), calls))

    def _count_wire(self, message: Message | dict[str, Any], wire: dict[str, Any]) -> int:
        tokens = TOKENS_PER_MESSAGE + self.count_text(str(wire.get("role", "")))
        content = wire.get("content")
        if isinstance(content, str):
            tokens += self.count_text(content)
        elif isinstance(content, list):
            for part in content:
                tokens += self._count_part(part)
        if wire.get("name"):
            tokens += TOKENS_PER_NAME + self.count_text(str(wire["name"]))
        if wire.get("tool_call_id"):
            tokens += self.count_text(str(wire["tool_call_id"]))
        for call in wire.get("tool_calls") or ():
            fn = call.get("function", {})
            tokens += self.count_text(str(call.get("id", ""))) + self.count_text(str(fn.get("name", "")))
            tokens += self.count_text(str(fn.get("arguments", "")))
        if isinstance(message, Message) and message.base64_image and not isinstance(content, list):
            tokens += image_tokens_b64(message.base64_image, "high")
        return tokens

    def _count_part(self, part: object) -> int:
        if not isinstance(part, dict):
            return 0
        if part.get("type") == "text":
            return self.count_text(str(part.get("text", "")))
        if part.get("type") == "image_url":
            image = part.get("image_url") or {}
            detail = image.get("detail", "auto")
            url = str(image.get("url", ""))
            data = url.split(",", 1)[1] if url.startswith("data:") and "," in url else None
            return image_tokens_b64(data, detail) if data else image_tokens(None, detail)
        return 0

    def count_messages(self, messages: Iterable[Message | dict[str, Any]]) -> int:
        return sum(self.count_message(m) for m in messages) + REPLY_PRIMING

    def count_tools(self, tools: Sequence[dict[str, Any]] | None) -> int:
        """Tool schemas are injected into the prompt; their JSON size is a fair estimate."""
        if not tools:
            return 0
        total = 0
        for tool in tools:
            # Tool lists are built once and passed again on every call: remember them by identity
            # (the entry keeps the dict alive, so its id cannot be reused meanwhile).
            hit = self._tool_cache.get(id(tool))
            if hit is None or hit[0] is not tool:
                hit = (tool, self.count_text(json.dumps(tool, ensure_ascii=False, separators=(",", ":"))))
                if len(self._tool_cache) >= _CACHE_SIZE:
                    self._tool_cache.clear()
                self._tool_cache[id(tool)] = hit
            total += hit[1]
        return total


# ---------------------------------------------------------------------------- images


def image_tokens(size: tuple[int, int] | None, detail: str = "auto") -> int:
    """OpenAI's rule: low = 85; high/auto = fit into 2048x2048, shortest side down to 768,
    then 170 per 512-px tile + 85. An unknown size is billed as one 2048x2048 image."""
    if detail == "low":
        return LOW_DETAIL_TOKENS
    width, height = size or (MAX_SIDE_PX, MAX_SIDE_PX)
    if width <= 0 or height <= 0:
        return LOW_DETAIL_TOKENS
    if max(width, height) > MAX_SIDE_PX:
        scale = MAX_SIDE_PX / max(width, height)
        width, height = int(width * scale), int(height * scale)
    if min(width, height) > SHORT_SIDE_PX:  # small images are not scaled up
        scale = SHORT_SIDE_PX / min(width, height)
        width, height = int(width * scale), int(height * scale)
    tiles = math.ceil(width / TILE_PX) * math.ceil(height / TILE_PX)
    return TILE_TOKENS * tiles + LOW_DETAIL_TOKENS


def image_tokens_b64(data: str | bytes, detail: str = "auto") -> int:
    raw = data if isinstance(data, bytes) else _b64decode_head(data)
    return image_tokens(image_size(raw), detail)


def _b64decode_head(text: str, chars: int = 64 * 1024) -> bytes:
    # Only the header is needed; decode a prefix whose length is a multiple of 4.
    head = "".join(text[: chars + 64].split())[:chars]
    head = head[: len(head) - len(head) % 4]
    try:
        return base64.b64decode(head, validate=False)
    except (binascii.Error, ValueError):
        return b""


def image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG, GIF, JPEG or WEBP header; None when unknown."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) >= 24:
        w, h = struct.unpack(">II", data[16:24])
        return int(w), int(h)
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        w, h = struct.unpack("<HH", data[6:10])
        return int(w), int(h)
    if data.startswith(b"\xff\xd8"):
        return _jpeg_size(data)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _webp_size(data)
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            i += 1
            continue
        marker = data[i + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7 or marker == 0xFF:
            i += 1 if marker == 0xFF else 2
            continue
        length = struct.unpack(">H", data[i + 2 : i + 4])[0]
        # SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC) carry the frame size.
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack(">HH", data[i + 5 : i + 9])
            return int(w), int(h)
        i += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        w = int.from_bytes(data[24:27], "little") + 1
        h = int.from_bytes(data[27:30], "little") + 1
        return w, h
    if chunk == b"VP8 " and len(data) >= 30:
        w, h = struct.unpack("<HH", data[26:30])
        return int(w & 0x3FFF), int(h & 0x3FFF)
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None
