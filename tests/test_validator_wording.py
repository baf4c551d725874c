"""Findings read in the person's language: every phrase has a Chinese and an English template with
the same values, and the verdict of a plan with an injected fault gives its reasons and failed
checks in Chinese to a Chinese request and in English to an English one."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import pytest

from agent_core.validator import wording, wording_facts, wording_plan, wording_run
from agent_core.validator.checker import PlanChecker
from agent_core.validator.constraints import read_constraints
from agent_core.validator.findings import Category, CheckReport
from agent_core.validator.validator import Assessment
from bot.run.review import replan_feedback, verdict_of
from tests.validator_support import Sandbox, load_sandbox
from tools.plan import TripPlan

CORPUS = Path(__file__).parent / "validator_corpus"
FAULTS = sorted(p.stem for p in CORPUS.glob("*.json") if not p.stem.startswith("ok_"))
CJK = re.compile(r"[\u4e00-\u9fff]")
FIELD = re.compile(r"\{[^}]*\}")
TOOL_NAME = re.compile(r"\b[a-z]+_[a-z]+\b")
ENGLISH_CLAUSE = re.compile(r"\b[A-Za-z]{2,}(?:\s+[A-Za-z]{2,}){2,}\b")  # three English words in a row


def phrases() -> list[wording.Phrase]:
    return [v for m in (wording, wording_facts, wording_plan, wording_run) for v in vars(m).values() if isinstance(v, wording.Phrase)]


def test_every_phrase_has_both_languages_with_the_same_values() -> None:
    found = phrases()
    assert len(found) > 60
    assert len({p.key for p in found}) == len(found)
    for p in found:
        assert p.fields("zh") == p.fields("en"), p.key
        assert not CJK.search(p.en), p.key
        # the Chinese template's own words are Chinese (tool names like poi_search aside)
        assert not re.search(r"[A-Za-z]", TOOL_NAME.sub("", FIELD.sub("", p.zh))), p.key


def test_nested_words_follow_the_language() -> None:
    text = wording_plan.FORBIDDEN_KIND(kind=wording.kind("flight"))
    assert text.render("zh") == "用户不想乘坐航班" and text.render("en") == "the person does not want to go by flight"
    assert Category.INCOMPLETE.text("zh") == "行程不完整" and Category.INCOMPLETE.text("en") == "incomplete"
    assert Category.INCOMPLETE.value == "incomplete"  # the category itself is unchanged


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return load_sandbox()


async def report_of(name: str, sandbox: Sandbox) -> CheckReport:
    entry = json.loads((CORPUS / f"{name}.json").read_text(encoding="utf-8"))
    plan = TripPlan.model_validate(entry["plan"])
    constraints = read_constraints([entry["request"]], date.fromisoformat(entry["today"]))
    return await PlanChecker(sandbox.facts()).check(plan, constraints)


@pytest.mark.parametrize("name", FAULTS)
async def test_the_verdict_speaks_the_persons_language(name: str, sandbox: Sandbox) -> None:
    report = await report_of(name, sandbox)
    found = Assessment(report.label(), report, None, True)
    zh, en = verdict_of(found, "zh", rounds=1), verdict_of(found, "en", rounds=1)
    assert (zh.label, zh.label_en) == (en.label, en.label_en) == (report.label().zh, report.label().en)
    assert len(zh.failed_checks) == len(en.failed_checks) == len(report.findings)
    for f, zh_reason, en_reason in zip(report.findings, zh.reasons, en.reasons, strict=False):
        zh_problem, en_problem = f.problem_text("zh"), f.problem_text("en")
        assert zh_reason == f"{f.category.text('zh')}：{f.item}：{zh_problem}"
        assert CJK.search(zh_problem) and not ENGLISH_CLAUSE.search(zh_reason), zh_reason
        assert en_problem not in zh_reason
        assert en_reason == f"{f.category.text('en')}: {f.item}: {en_problem}"
        assert ENGLISH_CLAUSE.search(en_problem) and zh_problem not in en_reason, en_reason
    for zh_line, en_line in zip(zh.failed_checks, en.failed_checks, strict=True):
        assert "依据" in zh_line and not ENGLISH_CLAUSE.search(zh_line), zh_line
        assert "(evidence: " in en_line and "依据" not in en_line, en_line


async def test_replan_feedback_keeps_the_findings_exact_in_english(sandbox: Sandbox) -> None:
    report = await report_of("wrong_departure_time_bj_sh_train", sandbox)
    found = Assessment(report.label(), report, None, True)
    note = replan_feedback(found, "zh")
    assert note.startswith("评审结论：不满意,信息不真实")
    assert all(f"- {f.line()}" in note for f in report.findings)
    assert "departure" in note and "does not match" in note
