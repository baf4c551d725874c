"""Cut Telegram HTML into messages under the length limit, and turn it back into plain text.

Text is cut on line boundaries. A single line longer than the limit is cut between characters,
never inside a tag or an entity; tags open at the cut are closed at the end of one part and
reopened at the start of the next, so every part parses on its own.
"""

from __future__ import annotations

import html
import re

LIMIT = 4096
_TOKEN = re.compile(r"<[^>]*>|&#?[0-9a-zA-Z]+;|.", re.DOTALL)
_TAG_NAME = re.compile(r"</?\s*([a-zA-Z][a-zA-Z0-9-]*)")


def units(text: str) -> int:
    """Length as Telegram counts it (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


def split_html(text: str, limit: int = LIMIT) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    size = 0
    for line in text.split("\n"):
        pieces = [line] if units(line) <= limit else _cut_line(line, limit)
        for piece in pieces:
            extra = units(piece) + (1 if current else 0)
            if current and size + extra > limit:
                parts.append("\n".join(current))
                current, size = [], 0
                extra = units(piece)
            current.append(piece)
            size += extra
    if current:
        parts.append("\n".join(current))
    return [p for p in (part.strip("\n") for part in parts) if p.strip()]


def _cut_line(line: str, limit: int) -> list[str]:
    out: list[str] = []
    open_tags: list[tuple[str, str]] = []  # (name, the start tag as written)
    buf: list[str] = []
    size = 0

    def closing() -> str:
        return "".join(f"</{name}>" for name, _ in reversed(open_tags))

    def reopen() -> str:
        return "".join(tag for _, tag in open_tags)

    for token in _TOKEN.findall(line):
        cost = units(token)
        if size + cost + units(closing()) > limit and buf:
            out.append("".join(buf) + closing())
            buf = [reopen()]
            size = units(buf[0])
        buf.append(token)
        size += cost
        if token.startswith("<") and len(token) > 1:
            m = _TAG_NAME.match(token)
            if m is None:
                continue
            name = m.group(1).lower()
            if token.startswith("</"):
                for i in range(len(open_tags) - 1, -1, -1):
                    if open_tags[i][0] == name:
                        del open_tags[i]
                        break
            elif not token.endswith("/>"):
                open_tags.append((name, token))
    if buf:
        out.append("".join(buf))
    return out


def html_to_plain(text: str) -> str:
    """What the person would have seen, without formatting (the parse-error fallback)."""
    return html.unescape(re.sub(r"<[^>]*>", "", text))
