"""Text for Slack: escaping, a small Markdown -> mrkdwn conversion, and splitting by size.

Slack reads `&`, `<` and `>` as control characters in message text, so anything a model or a
person wrote is escaped before it is posted. A mention (`<@U…>`) is the one control sequence let
through (`live`): where the bot or the model names a person — a question to a traveller, a
status line, a plan's per-person part, a notice — it stays a mention. A person's own words placed
in a notice are made inert first (bot.surface.quoted), so they show as typed.
"""

from __future__ import annotations

import re

_BOLD = re.compile(r"\*\*(.+?)\*\*")
_UNDER_BOLD = re.compile(r"__(.+?)__")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)")
_BULLET = re.compile(r"^(\s*)[-*+]\s+", re.MULTILINE)
_ANSWER_TAG = re.compile(r"</?answer>", re.IGNORECASE)
_MENTION = re.compile(r"<@([A-Z0-9]+)(?:\|[^>]*)?>")
# a user mention once escaped (the `|name` some writers add is dropped: Slack shows the name itself)
_ESCAPED_MENTION = re.compile(r"&lt;@([UW][A-Z0-9]+)(?:\|[^&<>|]{0,80})?&gt;")


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def live(text: str) -> str:
    """`text` escaped, its user mentions left working."""
    return _ESCAPED_MENTION.sub(r"<@\1>", escape(text))


def unescape(text: str) -> str:
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def to_mrkdwn(markdown: str) -> str:
    """The common Markdown a model writes, as Slack mrkdwn (escaped)."""
    text = live(_ANSWER_TAG.sub("", markdown).strip())
    text = _LINK.sub(lambda m: f"<{m.group(2)}|{m.group(1)}>", text)
    text = _HEADING.sub(lambda m: "*" + m.group(1).replace("**", "") + "*", text)
    text = _BOLD.sub(lambda m: f"*{m.group(1)}*", text)
    text = _UNDER_BOLD.sub(lambda m: f"*{m.group(1)}*", text)
    return _BULLET.sub(lambda m: f"{m.group(1)}• ", text)


def strip_mentions(text: str, user_id: str) -> str:
    """Remove mentions of `user_id` (the bot) and tidy the spaces they leave."""
    out = _MENTION.sub(lambda m: "" if m.group(1) == user_id else m.group(0), text)
    return re.sub(r"[ \t]{2,}", " ", out).strip()


def mentions(text: str, user_id: str) -> bool:
    return any(m.group(1) == user_id for m in _MENTION.finditer(text))


def split_text(text: str, limit: int) -> list[str]:
    """Cut `text` into pieces of at most `limit` characters, at paragraph, line or word ends."""
    pieces: list[str] = []
    rest = text.strip()
    while len(rest) > limit:
        window = rest[:limit]
        cut = max(window.rfind("\n\n"), -1)
        if cut < limit // 2:
            cut = window.rfind("\n")
        if cut < limit // 2:
            cut = window.rfind(" ")
        if cut < limit // 2:
            cut = limit
            # never cut an escape like &amp; in half
            amp = window.rfind("&", limit - 5)
            if amp != -1 and ";" not in window[amp:]:
                cut = amp
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        pieces.append(rest)
    return pieces
