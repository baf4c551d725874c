"""Sandbox web search: a small built-in corpus of travel tips, ranked by shared words and bigrams."""

from __future__ import annotations

import itertools
import json
import re
from importlib import resources
from pathlib import Path

from tools.travel.models import Found, WebHit

NOTE = "offline: the sandbox searches a small built-in set of travel tips, not the web"
_WORD = re.compile(r"[a-z0-9']+|[\u4e00-\u9fff]")


def _grams(text: str) -> set[str]:
    tokens = _WORD.findall(text.lower())
    grams = {t for t in tokens if len(t) > 1}
    cjk = [t for t in tokens if len(t) == 1]
    grams.update(a + b for a, b in itertools.pairwise(cjk))
    return grams


class SandboxWeb:
    def __init__(self, data_dir: Path | None = None) -> None:
        base = data_dir or Path(str(resources.files("tools.travel") / "data"))
        rows = json.loads((base / "tips.json").read_text(encoding="utf-8"))
        self._docs = [(r["id"], r["title"], r["text"], _grams(r["title"] + " " + r["text"] + " " + r["tags"])) for r in rows]

    def find(self, query: str, limit: int) -> list[WebHit]:
        q = _grams(query)
        scored = [(len(q & grams), doc_id, title, text) for doc_id, title, text, grams in self._docs]
        scored = [s for s in scored if s[0] > 0]
        scored.sort(key=lambda s: (-s[0], s[1]))
        return [WebHit(title=t, snippet=x, url=f"sandbox://tips/{i}") for _, i, t, x in scored[:limit]]

    async def search(self, query: str, limit: int) -> Found[WebHit]:
        return Found(self.find(query, limit), "sandbox", NOTE)
