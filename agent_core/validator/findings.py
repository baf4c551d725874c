"""What a deterministic check found: the plan item, the category, and the tool evidence."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from agent_core.validator.labels import Label
from agent_core.validator.wording import Text


class Category(StrEnum):
    FACT = "信息不真实"  # a fact in the plan does not match the tool that owns it
    LOGIC = "逻辑不合理"  # an impossible or unsafe timeline
    CONSTRAINT = "未满足用户特定约束"  # a hard limit the person set is broken
    NEED = "未满足用户特定需求"  # something the person wanted is missing
    INCOMPLETE = "incomplete"  # a part of the trip is missing

    @property
    def cap(self) -> Label:
        """The best verdict a plan with such a finding can get."""
        return _CAPS[self]

    def text(self, lang: str) -> str:
        return (_ZH if lang == "zh" else _EN).get(self, self.value)


_CAPS = {
    Category.FACT: Label.NOT_TRUE,
    Category.LOGIC: Label.NOT_LOGICAL,
    # The original's first gate is "logical and complete": a missing part fails it.
    Category.INCOMPLETE: Label.NOT_LOGICAL,
    Category.CONSTRAINT: Label.CONSTRAINT_BROKEN,
    Category.NEED: Label.NEED_UNMET,
}
_ZH = {Category.INCOMPLETE: "行程不完整"}
_EN = {
    Category.INCOMPLETE: "incomplete",
    Category.FACT: "fact mismatch",
    Category.LOGIC: "impossible timeline",
    Category.CONSTRAINT: "broken constraint",
    Category.NEED: "unmet need",
}


@dataclass(frozen=True, slots=True)
class Finding:
    category: Category
    item: str  # the plan item, e.g. "legs[0] G1 北京南→上海虹桥"
    problem: Text  # what is wrong (a template key and its values: Chinese or English on demand)
    evidence: Text  # what the tool (or the request) says

    def problem_text(self, lang: str) -> str:
        return self.problem.render(lang)

    def line(self, lang: str = "en") -> str:
        """The whole finding in one line, for the person's failed checks, the planner and the logs."""
        if lang == "zh":
            return f"[{self.category.text(lang)}] {self.item}：{self.problem.render(lang)}（依据：{self.evidence.render(lang)}）"
        return f"[{self.category.text(lang)}] {self.item}: {self.problem.render(lang)} (evidence: {self.evidence.render(lang)})"


@dataclass(slots=True)
class CheckReport:
    findings: list[Finding] = field(default_factory=list)
    has_backups: bool = False
    lookups: int = 0  # how many facts were re-queried

    def add(self, category: Category, item: str, problem: Text, evidence: Text) -> None:
        """A finding; the same problem of the same item is kept once (the first evidence wins:
        the run's own tool result is checked before the provider is asked again)."""
        if any(f.category is category and f.item == item and f.problem == problem for f in self.findings):
            return
        self.findings.append(Finding(category, item, problem, evidence))

    @property
    def ok(self) -> bool:
        return not self.findings

    def categories(self) -> set[Category]:
        return {f.category for f in self.findings}

    def cap(self) -> Label | None:
        """The verdict ceiling these findings set; None when nothing failed."""
        if not self.findings:
            return None
        return max((f.category.cap for f in self.findings), key=lambda lab: lab.rank)

    def label(self) -> Label:
        """The verdict from the checks alone (no rubric): contingency judged by the plan's backups."""
        cap = self.cap()
        if cap is not None:
            return cap
        return Label.EXCELLENT if self.has_backups else Label.NO_CONTINGENCY
