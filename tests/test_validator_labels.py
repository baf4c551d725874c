"""The six labels read back from model text, the verdict order, and the person's constraints."""

from __future__ import annotations

from datetime import date

import pytest

from agent_core.schema import Function, Message, ToolCall
from agent_core.validator.constraints import person_texts, read_constraints
from agent_core.validator.findings import Category, CheckReport
from agent_core.validator.labels import Label, parse_label, worst
from agent_core.validator.wording import raw


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("结论：非常满意", Label.EXCELLENT),
        ("结论：非常满意但未应对突发情况", Label.NO_CONTINGENCY),
        ("**结论**：不满意，信息不真实", Label.NOT_TRUE),
        ("Verdict: 不满意, 逻辑不合理", Label.NOT_LOGICAL),
        ("理由……\n结论: 基本满意但未满足用户特定约束。", Label.CONSTRAINT_BROKEN),
        ("基本满意 但 未满足用户特定需求", Label.NEED_UNMET),
        ("Verdict: Not satisfied: information does not match the sources", Label.NOT_TRUE),
        ("verdict - mostly satisfied, but a specific need is not met", Label.NEED_UNMET),
        # the labels quoted first (the rubric), the conclusion last: the last one counts
        ("可选：非常满意、不满意,逻辑不合理……\n我的结论：不满意,信息不真实", Label.NOT_TRUE),
        ("不满意,信息不真实? 复核后结论：非常满意", Label.EXCELLENT),
    ],
)
def test_parse_label_reads_the_conclusion(text: str, label: Label) -> None:
    assert parse_label(text) is label


def test_parse_label_none_when_absent() -> None:
    assert parse_label("I think it is fine overall.") is None
    assert parse_label("满意") is None


def test_worst_follows_the_decision_order() -> None:
    assert worst(Label.EXCELLENT, Label.NOT_TRUE) is Label.NOT_TRUE
    assert worst(Label.NOT_TRUE, Label.NOT_LOGICAL) is Label.NOT_LOGICAL
    assert worst(Label.NEED_UNMET, None, Label.CONSTRAINT_BROKEN) is Label.CONSTRAINT_BROKEN
    assert worst() is Label.EXCELLENT
    assert [lab.unsatisfied for lab in Label] == [False, False, False, False, True, True]
    assert Label.from_zh("不满意，信息不真实") is Label.NOT_TRUE


def test_report_caps_by_category() -> None:
    r = CheckReport(has_backups=True)
    assert r.label() is Label.EXCELLENT
    assert CheckReport(has_backups=False).label() is Label.NO_CONTINGENCY
    r.add(Category.NEED, "x", raw("p"), raw("e"))
    assert r.label() is Label.NEED_UNMET
    r.add(Category.FACT, "x", raw("p"), raw("e"))
    assert r.label() is Label.NOT_TRUE
    r.add(Category.INCOMPLETE, "legs", raw("no return"), raw("e"))
    assert r.label() is Label.NOT_LOGICAL


TODAY = date(2026, 4, 20)


def test_constraints_from_chinese_request() -> None:
    c = read_constraints(["5月1日从北京去上海玩3天，预算3000，不坐飞机，避开东航，不去外滩，二等座"], TODAY)
    assert c.fixed_start == date(2026, 5, 1)
    assert c.request.budget == 3000
    assert c.forbidden_transport == {"flight"}
    assert any("东方航空" in a for a in c.avoid_airlines)
    assert "外滩" in c.avoid_places
    assert c.request.seat == "二等座"
    assert c.request.trip_nights == 2


def test_constraints_from_english_request_and_relative_dates_are_not_fixed() -> None:
    c = read_constraints(["Next Friday from Shanghai to Beijing, 2 people, budget 5000, no trains, avoid China Eastern flights"], TODAY)
    assert c.fixed_start is None  # relative: depends on the run's clock
    assert c.forbidden_transport == {"train"}
    assert c.request.travellers == 2 and c.request.budget == 5000
    assert any("China Eastern" in a for a in c.avoid_airlines)


def test_person_texts_take_answers_and_skip_review_notes() -> None:
    ask = ToolCall(id="c1", function=Function(name="ask_human", arguments='{"inquire": "哪天出发？"}'))
    messages = [
        Message.user("去杭州"),
        Message.assistant(None, [ask]),
        Message.tool("2026-05-02", tool_call_id="c1", name="ask_human"),
        Message.user("[review] 不满意,信息不真实 ..."),
        Message.user("预算改成2000"),
    ]
    texts = person_texts("去杭州", messages)
    assert texts == ["去杭州", "2026-05-02", "预算改成2000"]
    c = read_constraints(texts, TODAY)
    assert c.fixed_start == date(2026, 5, 2) and c.request.budget == 2000
