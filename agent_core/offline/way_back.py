"""Which words of a message speak of the way back: "can we come back Sunday evening instead?",
"周六早上出发周日晚上回", "return after 6pm" (not "回家过年", "回家看爸妈": going home is the way there).

A day said there is the day home (the trip's end), not a new start, and a part of the day said
there is when to come back, not when to leave (agent_core.offline.wishes reads both). A clause
is cut at the punctuation or the "and"/"but" around it; a clause that also says when to leave
("周六早上出发周日晚上回") keeps for the way back only its side of the leaving word.
"""

from __future__ import annotations

import re
from itertools import pairwise

_BACK = re.compile(
    r"\bcom(?:e|ing) back\b|\breturn(?:ing)?\b|\bhead(?:ing)? back\b|\bget(?:ting)? back\b|\b(?:fly|train|drive) back\b|"
    r"\bback home\b|\bthe way back\b|\bback (?:on |by )?(?=(?:mon|tues|wednes|thurs|fri|satur|sun)day\b)|"
    r"回来|回去|回家(?!过年|看|探亲|住)|回程|返回|返程|回(?=$|[，。,.!?！？\s]|到)",
    re.I,
)
_LEAVE = re.compile(r"\bleav(?:e|ing)\b|\bdepart\w*|\bset(?:ting)? off\b|\bgo(?:ing)? out\b|出发|去程", re.I)
_CLAUSE = re.compile(r"[,，。;；.!?！？\n]|\band\b|\bbut\b|\bthen\b", re.I)


def back_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) spans of `text` that speak of the way back, in order."""
    bounds = [0, *(m.end() for m in _CLAUSE.finditer(text)), len(text)]
    spans: list[tuple[int, int]] = []
    for start, end in pairwise(bounds):
        clause = text[start:end]
        back = _BACK.search(clause)
        if back is None:
            continue
        leave = _LEAVE.search(clause)
        if leave is None:
            spans.append((start, end))
        elif leave.end() <= back.start():  # "周六早上出发周日晚上回": after the leaving word
            spans.append((start + leave.end(), end))
        else:  # "come back Sunday, leaving Friday" within one clause: before it
            spans.append((start, start + leave.start()))
    return spans


def inside(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(s <= start and end <= e for s, e in spans)


def blank(text: str, spans: list[tuple[int, int]], *, keep: bool) -> str:
    """`text` with the spans (keep=False) or all but them (keep=True) blanked, positions kept."""
    return "".join(ch if inside(spans, i, i + 1) == keep else " " for i, ch in enumerate(text))
