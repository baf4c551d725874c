"""A real model sees the request state: on a follow-up, the system prompt of every model call says
which trip is on the table, the changes asked since the first request and what the last
message is; the rules tell it to change only what was asked, and how to read dates and notes."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from agent_core.model import TokenUsage, ToolChoice
from agent_core.prompts import build_system_prompt
from agent_core.prompts.request_note import RequestNote
from agent_core.schema import Message, Origin, Role
from agent_core.travel_agent import TravelAgent, travel_toolset
from tools.base import ToolContext
from tools.travel import Gazetteer

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=ZoneInfo("Asia/Shanghai"))


class Recorder:
    """A model that answers every call with a short text and keeps what it was sent."""

    name = "recorder"

    def __init__(self) -> None:
        self.seen: list[list[Message]] = []

    async def ask_tool(self, messages: Sequence[Message], *, tools: Sequence[dict[str, Any]] | None = None,
                       tool_choice: ToolChoice = "auto", usage: TokenUsage | None = None) -> Message:
        self.seen.append(list(messages))
        return Message.assistant("<answer>ok</answer>")


async def run(gazetteer: Gazetteer, history: list[Message], lang: str = "en") -> str:
    model = Recorder()
    agent = TravelAgent.create(model=model, tools=travel_toolset([]), timezone="Asia/Shanghai",
                               context=ToolContext(tool_call_id="", now=NOW, lang=lang), requests=RequestNote(gazetteer))
    for m in history:
        agent.memory.add(m)
    async for _ in agent.run():
        pass
    system = model.seen[0][0]
    assert system.role is Role.SYSTEM
    return system.content or ""


async def test_a_follow_up_shows_the_trip_and_the_change(gazetteer: Gazetteer) -> None:
    history = [Message.user("Beijing to Shanghai next Friday for 2 days, 2 people"),
               Message.assistant("<answer>Here is the plan.</answer>"), Message.user("one more night")]
    prompt = await run(gazetteer, history)
    assert "The trip on the table" in prompt
    assert "from Beijing to Shanghai" in prompt and "2 travellers" in prompt and "leaving 2026-12-11" in prompt
    assert "changes asked since the first request: nights 1 -> 2" in prompt
    assert "a change to the trip on the table" in prompt
    assert "change only what they name" in prompt  # the rule


async def test_a_review_note_is_not_the_persons_words(gazetteer: Gazetteer) -> None:
    history = [Message.user("Beijing to Shanghai next Friday for 2 days"), Message.assistant("<answer>plan</answer>"),
               Message.user("[review] legs[0] K8848 上海→北京 2027-01-16: fix it", origin=Origin.REVIEW)]
    prompt = await run(gazetteer, history)
    assert "from Beijing to Shanghai" in prompt and "2027-01-16" not in prompt.split("The trip on the table")[1]


async def test_a_team_request_and_a_thank_you(gazetteer: Gazetteer) -> None:
    history = [Message.user("offsite in Hangzhou, 12–14 March, for Ana (Beijing), Bo (Shanghai) and Chen"),
               Message.assistant("<answer>plan</answer>"), Message.user("Thanks, this looks great!")]
    prompt = await run(gazetteer, history)
    assert "Ana from Beijing, Bo from Shanghai, Chen from (ask them)" in prompt
    assert "leaving 2027-03-12, back 2027-03-14, 2 nights" in prompt
    assert "thanks: reply briefly, do not plan again" in prompt


async def test_no_note_before_the_person_asks_anything(gazetteer: Gazetteer) -> None:
    prompt = await run(gazetteer, [Message.user("hi")], "en")
    assert "The trip on the table" not in prompt
    zh = build_system_prompt("zh", NOW, "Asia/Shanghai", None)
    assert "只改用户说的那一处" in zh and "以日期为准" in zh and "[review]" in zh
    assert prompt.startswith(build_system_prompt("en", NOW, "Asia/Shanghai", None))


async def test_a_model_is_told_the_limits_on_the_rides(gazetteer: Gazetteer) -> None:
    """What the offline planner honours, a model is told: when to come back, by when to be
    there, no overnight ride, no hard seat."""
    history = [Message.user("Wuhan to Shenzhen next Friday for a meeting at 2pm, 2 nights"),
               Message.assistant("<answer>Here is the plan.</answer>"),
               Message.user("can we come back Sunday evening instead? no overnight trains and no hard seats please")]
    prompt = await run(gazetteer, history)
    note = prompt.split("The trip on the table")[1]
    assert "be there by 13:00" in note and "come back after 17:00" in note
    assert "no overnight rides" in note and "no hard seat (硬座)" in note
