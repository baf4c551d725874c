"""Write agent_core/data/*.tiktoken from the npm package `tiktoken`'s encoders/*.json.

    npm pack tiktoken@1.0.22 && tar xzf tiktoken-1.0.22.tgz
    python scripts/encodings_from_npm.py package/encoders

Each JSON's `bpe_ranks` holds lines `<any> <first rank> <token> <token> ...` (tokens in base64,
ranks counting up from the first); the rank file is one `<token> <rank>` line per token in rank
order. The result must hash to what tiktoken itself expects of a download (the hashes below, from
tiktoken 0.14.0's tiktoken_ext/openai_public.py), or nothing is written.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

EXPECTED = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}
OUT = Path(__file__).resolve().parent.parent / "agent_core" / "data"


def rank_file(bpe_ranks: str) -> bytes:
    ranks: dict[str, int] = {}
    for line in bpe_ranks.split("\n"):
        if not line:
            continue
        _, first, *tokens = line.split(" ")
        for offset, token in enumerate(tokens):
            ranks[token] = int(first) + offset
    return "".join(f"{token} {rank}\n" for token, rank in sorted(ranks.items(), key=lambda kv: kv[1])).encode()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("encoders", type=Path, help="the npm package's encoders/ folder")
    args = parser.parse_args()
    for name, expected in EXPECTED.items():
        data = rank_file(json.loads((args.encoders / f"{name}.json").read_text())["bpe_ranks"])
        got = hashlib.sha256(data).hexdigest()
        if got != expected:
            print(f"{name}: SHA-256 {got}, expected {expected}: not written", file=sys.stderr)
            return 1
        (OUT / f"{name}.tiktoken").write_bytes(data)
        print(f"{name}: {len(data):,} bytes, SHA-256 as tiktoken expects")
    return 0


if __name__ == "__main__":
    sys.exit(main())
