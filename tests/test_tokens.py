"""Token counting: text, messages, images, and the offline encoding fallback."""

from __future__ import annotations

import base64
import hashlib
import logging
import shutil
import struct
from pathlib import Path

import pytest
import tiktoken_ext

from agent_core.schema import Function, Message, ToolCall
from agent_core.tokens import (
    OFFLINE_ENCODING,
    TokenCounter,
    image_size,
    image_tokens,
    image_tokens_b64,
)

CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


def png(w: int, h: int) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">II", w, h) + b"\x08\x06\x00\x00\x00"


def gif(w: int, h: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", w, h) + b"\x00\x00\x00"


def jpeg(w: int, h: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    dqt = b"\xff\xdb" + struct.pack(">H", 4) + b"\x00\x00"
    sof2 = b"\xff\xc2" + struct.pack(">HBHHB", 11, 8, h, w, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + dqt + sof2 + b"\xff\xd9"


def webp_vp8x(w: int, h: int) -> bytes:
    body = b"VP8X" + struct.pack("<I", 10) + b"\x00\x00\x00\x00" + (w - 1).to_bytes(3, "little") + (h - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WEBP" + body


def webp_lossless(w: int, h: int) -> bytes:
    bits = (w - 1) | ((h - 1) << 14)
    body = b"VP8L" + struct.pack("<I", 5) + b"\x2f" + bits.to_bytes(4, "little")
    return b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WEBP" + body


@pytest.fixture
def counter() -> TokenCounter:
    return TokenCounter("gpt-4")


def test_text_counts(counter: TokenCounter) -> None:
    assert counter.count_text("hello world") == 2
    assert counter.count_text("") == 0 and counter.count_text(None) == 0
    assert counter.count_text("<|endoftext|>") > 1  # special tokens in user text are plain text
    assert counter.count_text("我想去上海") >= 4


def test_message_counts_include_overhead_names_and_tool_calls(counter: TokenCounter) -> None:
    plain = Message.user("hello world")
    assert counter.count_message(plain) == 3 + 1 + 2  # framing + role + text
    named = Message.tool("hello world", tool_call_id="call_1", name="lookup")
    assert counter.count_message(named) > counter.count_message(plain) + 2
    call = Message.assistant(None, [ToolCall(id="call_1", function=Function(name="lookup", arguments='{"q": "上海 酒店"}'))])
    assert counter.count_message(call) > counter.count_message(Message.assistant(None)) + 5
    assert counter.count_messages([plain, plain]) == 2 * counter.count_message(plain) + 3


@pytest.mark.parametrize(
    ("size", "detail", "tokens"),
    [
        ((4096, 8192), "low", 85),
        ((1024, 1024), "high", 765),
        ((2048, 4096), "high", 1105),
        ((2048, 4096), "auto", 1105),
        ((512, 512), "high", 255),
        ((100, 100), "high", 255),
    ],
)
def test_image_token_rule(size: tuple[int, int], detail: str, tokens: int) -> None:
    assert image_tokens(size, detail) == tokens


@pytest.mark.parametrize("make", [png, gif, jpeg, webp_vp8x, webp_lossless])
def test_image_sizes_from_headers(make: object) -> None:
    assert callable(make)
    assert image_size(make(1024, 768)) == (1024, 768)
    assert image_size(make(2048, 4096)) == (2048, 4096)


def test_image_tokens_from_base64(counter: TokenCounter) -> None:
    b64 = base64.b64encode(png(1024, 1024) + b"\x00" * 5000).decode()
    assert image_tokens_b64(b64, "low") == 85
    assert image_tokens_b64(b64, "high") == 765
    assert image_tokens_b64(base64.b64encode(jpeg(2048, 4096)).decode(), "high") == 1105
    assert image_size(b"not an image") is None
    with_image = Message.user("look", base64_image=b64)
    assert counter.count_message(with_image) == counter.count_message(Message.user("look")) + 765
    wire = {"role": "user", "content": [{"type": "text", "text": "look"},
                                        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b64}", "detail": "low"}}]}
    assert counter.count_message(wire) == counter.count_message(Message.user("look")) + 85


def test_offline_fallback_when_the_encoding_is_not_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    with caplog.at_level(logging.WARNING, logger="agent_core.tokens"):
        counter = TokenCounter("gpt-4o")  # o200k_base, which would need a download
    assert not counter.exact and counter.encoding_name == OFFLINE_ENCODING
    assert counter.count_text("hello world") == 2
    assert sum("estimates" in r.getMessage() for r in caplog.records) == 1


def test_cached_encoding_is_used_and_exact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    bundled = Path(next(iter(tiktoken_ext.__path__))) / "data" / "cl100k_base.tiktoken"
    shutil.copy(bundled, cache / hashlib.sha1(CL100K_URL.encode()).hexdigest())
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    counter = TokenCounter("gpt-4")
    assert counter.exact and counter.encoding_name == "cl100k_base"
    assert counter.count_text("hello world") == 2


def test_disabled_cache_means_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    assert TokenCounter("gpt-4").encoding_name == OFFLINE_ENCODING
