"""The token encodings, shipped in the package: o200k_base and cl100k_base.

tiktoken's own `get_encoding` downloads an encoding's rank file the first time it is used; a bot
that counts before every model call must not wait on (or fail for want of) the internet. So the
two rank files the OpenAI models use are package data (agent_core/data/, where SOURCES.md says
where they came from and how they were checked), read with tiktoken's `load_tiktoken_bpe`, which
refuses a file whose SHA-256 is not the one tiktoken publishes, and made into a
`tiktoken.Encoding` with the split pattern and special tokens tiktoken defines for them.

An encoding takes about half a second and tens of MB to build and never changes, so each is
built once per process (`shipped_encoding` is cached) and shared by every counter.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources

import tiktoken
from tiktoken.load import load_tiktoken_bpe

ENDOFTEXT = "<|endoftext|>"
ENDOFPROMPT = "<|endofprompt|>"


@dataclass(frozen=True, slots=True)
class ShippedEncoding:
    """What tiktoken_ext/openai_public.py defines for an encoding, less the download."""

    sha256: str  # tiktoken's expected_hash for the rank file
    pat_str: str
    special_tokens: dict[str, int]


# As tiktoken 0.14.0's tiktoken_ext/openai_public.py defines them.
SHIPPED: dict[str, ShippedEncoding] = {
    "o200k_base": ShippedEncoding(
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "|".join([
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]),
        {ENDOFTEXT: 199999, ENDOFPROMPT: 200018},
    ),
    "cl100k_base": ShippedEncoding(
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
        {ENDOFTEXT: 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260,
         ENDOFPROMPT: 100276},
    ),
}
# Encodings that split text exactly as a shipped one: the gpt-oss models' o200k_harmony is
# o200k_base plus special tokens, which a count of the person's text never treats as special.
SAME_COUNTS = {"o200k_harmony": "o200k_base"}
FALLBACK = "cl100k_base"  # for a model tiktoken does not know (its count is an estimate)


def model_encoding(model: str) -> str | None:
    """The name of `model`'s encoding as tiktoken maps it, None for a model it does not know."""
    try:
        name = tiktoken.encoding_name_for_model(model)
    except KeyError:
        return None
    return SAME_COUNTS.get(name, name)


@functools.cache
def shipped_encoding(name: str) -> tiktoken.Encoding:
    """A shipped encoding (a name in SHIPPED), built on its first use in the process."""
    shipped = SHIPPED[name]
    with resources.as_file(resources.files("agent_core") / "data" / f"{name}.tiktoken") as path:
        ranks = load_tiktoken_bpe(str(path), expected_hash=shipped.sha256)
    return tiktoken.Encoding(name, pat_str=shipped.pat_str, mergeable_ranks=ranks,
                             special_tokens=shipped.special_tokens)


def encoding_for(model: str) -> tuple[tiktoken.Encoding, bool]:
    """The encoding to count `model`'s tokens with, and whether its counts are exact (the
    model's own encoding is shipped); otherwise cl100k_base, whose counts are estimates."""
    name = model_encoding(model)
    if name in SHIPPED:
        return shipped_encoding(name), True
    return shipped_encoding(FALLBACK), False
