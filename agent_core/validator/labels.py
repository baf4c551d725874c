"""The six verdict labels of the original Validator, their English renderings, and reading them back.

The labels are ordered by the original's decision path (logical and complete -> verified ->
constraints -> needs -> contingency): a failure at an earlier gate outranks a later one, so the
verdict of a plan is the *worst* of the labels its checks and its rubric produce.
"""

from __future__ import annotations

import re
from enum import Enum


class Label(Enum):
    # value: (rank, Chinese label, English rendering); a higher rank is a worse verdict
    EXCELLENT = (0, "非常满意", "Very satisfied")
    NO_CONTINGENCY = (1, "非常满意但未应对突发情况", "Very satisfied, but no backup for disruptions")
    NEED_UNMET = (2, "基本满意但未满足用户特定需求", "Mostly satisfied, but a specific need is not met")
    CONSTRAINT_BROKEN = (3, "基本满意但未满足用户特定约束", "Mostly satisfied, but a specific constraint is broken")
    NOT_TRUE = (4, "不满意,信息不真实", "Not satisfied: information does not match the sources")
    NOT_LOGICAL = (5, "不满意,逻辑不合理", "Not satisfied: the plan is not logical")

    @property
    def rank(self) -> int:
        return self.value[0]

    @property
    def zh(self) -> str:
        return self.value[1]

    @property
    def en(self) -> str:
        return self.value[2]

    @property
    def unsatisfied(self) -> bool:
        """The planner should try again."""
        return self.rank >= Label.NOT_TRUE.rank

    def text(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en

    @classmethod
    def from_zh(cls, text: str) -> Label:
        key = _squash(text)
        for label in cls:
            if _squash(label.zh) == key:
                return label
        raise ValueError(f"not a verdict label: {text!r}")


def worst(*labels: Label | None) -> Label:
    present = [lab for lab in labels if lab is not None]
    return max(present, key=lambda lab: lab.rank) if present else Label.EXCELLENT


_PUNCT = re.compile(r"[\s,，、:：;；。.!！\"'“”‘’*`_\-—]+")


def _squash(text: str) -> str:
    return _PUNCT.sub("", text).lower()


def _patterns() -> list[tuple[re.Pattern[str], Label]]:
    out = []
    for label in Label:
        # Chinese: models space and punctuate the clauses freely ("不满意，信息不真实", "基本满意 但 ...")
        chars = [re.escape(ch) for ch in label.zh if ch not in ",，"]
        out.append((re.compile(r"[\s,，、:：;；]*".join(chars)), label))
        en_words = [re.escape(w) for w in re.findall(r"[A-Za-z]+", label.en)]
        out.append((re.compile(r"\W+".join(en_words), re.I), label))
    return out


def parse_label(text: str) -> Label | None:
    """The verdict a model wrote: the label that ends last in the text (the conclusion comes
    last; earlier mentions are usually the rubric being quoted). At the same end, the longest
    match wins, so 非常满意但未应对突发情况 is not read as 非常满意."""
    best: tuple[int, int, Label] | None = None
    for pattern, label in _patterns():
        for m in pattern.finditer(text):
            key = (m.end(), m.end() - m.start(), label)
            if best is None or key[:2] > best[:2]:
                best = key
    if best is not None:
        return best[2]
    return None
