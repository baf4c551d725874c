"""Conversation beyond trips: after a plan, thanks, feedback and questions about the plan get short
answers that fit them, never "Sorry, I did not understand", and never change the trip."""

from __future__ import annotations

import re

import pytest

from agent_core.offline import OfflinePlanner
from agent_core.offline.state import read_state
from agent_core.offline.transcript import read_transcript
from tests.offline.test_offline_planner import NOW, Drive, drive
from tools.collection import ToolCollection

FIRST = {"en": "Beijing to Shanghai next Friday for 3 days, 2 people", "zh": "下周五从北京去上海玩三天，两个人"}
NOT_UNDERSTOOD = ("did not understand", "没看懂")

# (lang, what the person says, a piece of the answer)
REMARKS: list[tuple[str, str, str]] = [
    ("en", "Thanks, this looks great!", "You're welcome"),
    ("en", "thank you", "You're welcome"),
    ("en", "perfect", "You're welcome"),
    ("en", "ok", "You're welcome"),
    ("en", "the total does not add up", "adds up like this"),
    ("en", "the price looks wrong", "adds up like this"),
    ("en", "how much is it per person?", "per person"),
    ("en", "why this train?", "How the rides were chosen"),
    ("en", "Why did you pick this hotel?", "The hotel is"),
    ("en", "what time do we leave?", "The times"),
    ("en", "why these sights?", "sights"),
    ("en", "is this a good plan?", "This plan"),
    ("en", "the train is too early", "Thanks for telling me"),
    ("zh", "谢谢", "不客气"),
    ("zh", "太好了，谢谢！", "不客气"),
    ("zh", "总价好像不对", "合计这样算"),
    ("zh", "加起来对不上", "合计这样算"),
    ("zh", "人均多少钱？", "人均"),
    ("zh", "为什么选这趟车？", "车次是这样选的"),
    ("zh", "为什么住这家酒店", "酒店选的是"),
    ("zh", "几点出发？", "出发和到达时间"),
    ("zh", "火车太早了", "谢谢指出"),
]


@pytest.fixture(scope="module")
def firsts() -> dict[str, Drive]:
    return {}


@pytest.mark.parametrize(("lang", "text", "fragment"), REMARKS, ids=[r[1] for r in REMARKS])
async def test_a_remark_gets_an_answer_and_the_trip_stays(planner: OfflinePlanner, tools: ToolCollection,
                                                           firsts: dict[str, Drive], lang: str, text: str, fragment: str) -> None:
    if lang not in firsts:
        firsts[lang] = await drive(planner, tools, FIRST[lang], lang=lang)
    first = firsts[lang]
    assert first.plan is not None
    before = read_state(read_transcript(first.messages), planner.places, NOW.date()).request
    d = await drive(planner, tools, text, lang=lang, messages=list(first.messages))
    searched = [len(x.calls(tool)) for x in (first, d) for tool in ("train_search", "hotel_search")]
    assert d.plan is None and not d.questions and searched[:2] == searched[2:]  # nothing searched, nothing planned
    answer = d.final_text or ""
    assert fragment in answer, answer
    assert not any(n in answer for n in NOT_UNDERSTOOD)
    after = read_state(read_transcript(d.messages), planner.places, NOW.date())
    assert after.request == before  # the trip on the table is the same
    # and a change after the remark still applies to that trip
    changed = await drive(planner, tools, "one more night" if lang == "en" else "多住一晚", lang=lang, messages=list(d.messages))
    assert changed.plan is not None and (changed.plan.origin_city, changed.plan.start_date) == (first.plan.origin_city,
                                                                                                 first.plan.start_date)


async def test_the_breakdown_adds_up_to_the_total(planner: OfflinePlanner, tools: ToolCollection) -> None:
    first = await drive(planner, tools, FIRST["en"], lang="en")
    assert first.plan is not None
    d = await drive(planner, tools, "the total does not add up", lang="en", messages=first.messages)
    numbers = [float(x) for x in re.findall(r"(\d+(?:\.\d+)?) CNY", d.final_text or "")]
    rides, stay, tickets, parts_sum, total = numbers[:5]
    assert rides + stay + tickets * first.plan.travellers == pytest.approx(parts_sum) == pytest.approx(total)
    assert total == pytest.approx(first.plan.total_cost)


async def test_gibberish_is_still_not_understood(planner: OfflinePlanner, tools: ToolCollection) -> None:
    first = await drive(planner, tools, FIRST["en"], lang="en")
    d = await drive(planner, tools, "asdf qwer", lang="en", messages=first.messages)
    assert d.plan is None and "did not understand" in (d.final_text or "")
