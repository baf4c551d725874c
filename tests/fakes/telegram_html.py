"""Telegram's HTML parse mode, parsed as strictly as the Bot API does it (for the fake server).

`parse_html(text)` returns the plain text and the entity list, or raises `EntityParseError`
with the message Telegram uses ("can't parse entities: ..."). Only the tags Telegram supports
are accepted; every start tag needs its end tag; ``<`` that does not start a tag is an error;
named entities other than ``&lt; &gt; &amp; &quot;`` are kept as literal text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TAGS = {
    "b": "bold", "strong": "bold", "i": "italic", "em": "italic", "u": "underline",
    "ins": "underline", "s": "strikethrough", "strike": "strikethrough", "del": "strikethrough",
    "span": "spoiler", "tg-spoiler": "spoiler", "a": "text_link", "code": "code", "pre": "pre",
    "blockquote": "blockquote", "tg-emoji": "custom_emoji",
}
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_ENTITY = re.compile(r"&(#[0-9]{1,7}|#x[0-9a-fA-F]{1,6}|[a-zA-Z]+);")
_START = re.compile(r"<([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[a-zA-Z-]+\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s>]+)|\s+[a-zA-Z-]+)*)\s*>")
_END = re.compile(r"</([a-zA-Z][a-zA-Z0-9-]*)\s*>")
_ATTR = re.compile(r"([a-zA-Z-]+)\s*=\s*(\"[^\"]*\"|'[^']*'|[^\s>]+)")


class EntityParseError(ValueError):
    def __init__(self, detail: str) -> None:
        super().__init__(f"Bad Request: can't parse entities: {detail}")
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Entity:
    type: str
    offset: int  # UTF-16 code units, as Telegram counts
    length: int
    url: str | None = None


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def parse_html(text: str) -> tuple[str, list[Entity]]:
    out: list[str] = []
    out_len = 0  # UTF-16 length of what is in `out`
    stack: list[tuple[str, int, str | None]] = []
    entities: list[Entity] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "<":
            offset = len(text[:i].encode("utf-8"))
            end = _END.match(text, i)
            if end:
                name = end.group(1).lower()
                if not stack or stack[-1][0] != name:
                    raise EntityParseError(f'Unmatched end tag at byte offset {offset}, expected "</{stack[-1][0]}>", found "</{name}>"' if stack else f"Unexpected end tag at byte offset {offset}")
                tag, start, url = stack.pop()
                if out_len > start:
                    entities.append(Entity(_TAGS[tag], start, out_len - start, url))
                i = end.end()
                continue
            start_m = _START.match(text, i)
            if not start_m:
                bad = re.match(r"<([^\s>]*)", text[i:])
                raise EntityParseError(f'Unsupported start tag "{bad.group(1) if bad else ""}" at byte offset {offset}')
            name = start_m.group(1).lower()
            if name not in _TAGS:
                raise EntityParseError(f'Unsupported start tag "{name}" at byte offset {offset}')
            attrs = {k.lower(): v.strip("\"'") for k, v in _ATTR.findall(start_m.group(2) or "")}
            url = None
            if name == "a":
                url = attrs.get("href")
                if not url:
                    raise EntityParseError(f"Can't find URL of the text link at byte offset {offset}")
            if name == "span" and attrs.get("class") != "tg-spoiler":
                raise EntityParseError(f'Tag "span" must have class "tg-spoiler" at byte offset {offset}')
            stack.append((name, out_len, url))
            i = start_m.end()
            continue
        if ch == "&":
            m = _ENTITY.match(text, i)
            if m:
                body = m.group(1)
                value: str | None
                if body.startswith("#x"):
                    value = chr(int(body[2:], 16))
                elif body.startswith("#"):
                    value = chr(int(body[1:]))
                else:
                    value = _NAMED.get(body)
                if value is not None:
                    out.append(value)
                    out_len += utf16_len(value)
                    i = m.end()
                    continue
        out.append(ch)
        out_len += utf16_len(ch)
        i += 1
    if stack:
        raise EntityParseError(f'Can\'t find end tag corresponding to start tag "{stack[-1][0]}"')
    return "".join(out), sorted(entities, key=lambda e: (e.offset, -e.length))
