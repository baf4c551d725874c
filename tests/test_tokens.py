"""Token counting: text, messages, images, and the encodings shipped with the package."""

from __future__ import annotations

import base64
import hashlib
import logging
import struct
from importlib import resources
from pathlib import Path

import pytest

from agent_core.encodings import SHIPPED, shipped_encoding
from agent_core.schema import Function, Message, ToolCall
from agent_core.tokens import (
    TokenCounter,
    image_size,
    image_tokens,
    image_tokens_b64,
)

# Known answers. cl100k_base: tiktoken's own tests (tests/test_encoding.py); both: published
# known-answer tests of another BPE implementation, ids produced by tiktoken 0.14.
MIXED = "I'm can't HELLO'S camelCaseWord  123456 \n\n  x"
CJK_EMOJI = "你好，世界 🌍🚀"
KNOWN_IDS = {
    "cl100k_base": {
        "hello world": [15339, 1917],
        "today\n \n": [31213, 27907],
        "👍": [9468, 239, 235],
        MIXED: [40, 2846, 649, 956, 38757, 1623, 13575, 50252, 4301, 11116, 220, 220, 4513, 10961, 4815, 220, 865],
        CJK_EMOJI: [57668, 53901, 3922, 3574, 244, 98220, 11410, 234, 235, 9468, 248, 222],
    },
    "o200k_base": {
        "hello world": [24912, 2375],
        MIXED: [15390, 8535, 58527, 2699, 31233, 83330, 6187, 12929, 220, 220, 7633, 19354, 1202, 220, 1215],
        CJK_EMOJI: [177519, 979, 28428, 130321, 235, 112927, 222],
    },
}


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


@pytest.mark.parametrize(("model", "encoding"), [("gpt-4o-mini", "o200k_base"), ("gpt-4o", "o200k_base"),
                                               ("gpt-5", "o200k_base"), ("gpt-oss-120b", "o200k_base"),
                                               ("gpt-4", "cl100k_base"), ("gpt-3.5-turbo", "cl100k_base")])
def test_a_model_s_own_encoding_counts_exactly(model: str, encoding: str) -> None:
    counter = TokenCounter(model)
    assert counter.exact and counter.encoding_name == encoding
    for text, ids in KNOWN_IDS[encoding].items():
        assert counter.count_text(text) == len(ids), text


@pytest.mark.parametrize("name", sorted(KNOWN_IDS))
def test_the_shipped_encodings_give_tiktoken_s_known_token_ids(name: str) -> None:
    encoding = shipped_encoding(name)
    for text, ids in KNOWN_IDS[name].items():
        assert encoding.encode(text) == ids and encoding.decode(ids) == text
    assert encoding.encode("<|endoftext|>", allowed_special="all") == [encoding.eot_token]
    assert encoding.n_vocab == {"cl100k_base": 100_277, "o200k_base": 200_019}[name]


def test_the_two_encodings_count_differently() -> None:
    # what the default model (gpt-4o-mini) once got: cl100k counts, 12 tokens for 7
    assert TokenCounter("gpt-4o-mini").count_text(CJK_EMOJI) == 7
    assert TokenCounter("gpt-4").count_text(CJK_EMOJI) == 12


def test_the_rank_files_are_the_ones_tiktoken_publishes() -> None:
    for name, shipped in SHIPPED.items():
        data = (resources.files("agent_core") / "data" / f"{name}.tiktoken").read_bytes()
        assert hashlib.sha256(data).hexdigest() == shipped.sha256


def test_a_model_tiktoken_does_not_know_is_counted_with_cl100k_and_said_to_be_estimated(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="agent_core.tokens"):
        counter = TokenCounter("deepseek-chat")
    assert not counter.exact and counter.encoding_name == "cl100k_base"
    assert counter.count_text(MIXED) == len(KNOWN_IDS["cl100k_base"][MIXED])
    assert sum("estimates" in r.getMessage() for r in caplog.records) == 1


def test_an_empty_tiktoken_cache_still_counts_exactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # nothing downloaded: the rank file is read from the package (tests never reach the internet,
    # so a download would fail here)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    shipped_encoding.cache_clear()
    try:
        counter = TokenCounter("gpt-4o")
        assert counter.exact and counter.count_text(CJK_EMOJI) == 7
    finally:
        shipped_encoding.cache_clear()
