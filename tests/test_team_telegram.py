"""The team flow in a Telegram group: three travellers named by @username, a question to each
at once, a wrong person refused, the plan signed off by an approver after a rejection."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.fakes.telegram_api import FakeTelegram
from tests.team_support import party_plan, question_for, team_request
from tests.telegram_support import containing, has, telegram_bot
from tools.ask_human import AskHuman
from tools.collection import ToolCollection
from tools.submit_plan import SubmitPlan
from tools.terminate import Terminate

GROUP = -100900
LABELS = ("@user11", "@user22", "@user33")
BOSS = 99


def _plan() -> dict[str, object]:
    return {"summary": "Team plan for Hangzhou.", "plan": party_plan(LABELS)}


async def test_a_team_trip_in_a_telegram_group(tmp_path: Path) -> None:
    script = [
        reply(tool_calls=[call("ask_human", {"inquire": question_for(label), "to": label}, id=f"call_{i}")
                          for i, label in enumerate(LABELS)]),
        reply(tool_calls=[call("submit_plan", _plan(), id="call_plan1")]),
        reply(tool_calls=[call("submit_plan", _plan(), id="call_plan2")]),
    ]
    tools = ToolCollection([AskHuman(), SubmitPlan(), Terminate()])
    async with FakeOpenAI(script) as llm, FakeTelegram() as tg, \
            telegram_bot(tmp_path, tg, llm.base_url, tools=tools, approvers=[str(BOSS)]):
        tg.send_text(GROUP, "@trip_test_bot " + team_request(LABELS), user_id=10)
        for label in LABELS:
            await tg.wait_for(has(question_for(label), GROUP), within=10)
        asked = {label: containing(tg, GROUP, question_for(label))[0] for label in LABELS}
        assert all(asked[label].text.startswith(label) for label in LABELS)  # each mentions its traveller

        tg.send_text(GROUP, "from 9 am", user_id=33)  # @user33's plain message answers their question
        tg.send_text(GROUP, "user11 leaves at 6!", user_id=44, reply_to=asked["@user11"].message_id)  # not theirs
        await tg.wait_for(has("That question is for @user11", GROUP), within=10)
        tg.send_text(GROUP, "after lunch", user_id=11, reply_to=asked["@user11"].message_id)
        tg.send_text(GROUP, "any time", user_id=22)
        await tg.wait_for(has("needs sign-off", GROUP), within=10)
        assert llm.requests[1].tool_results() == {"call_0": "after lunch", "call_1": "any time", "call_2": "from 9 am"}
        assert has("@user22 (Shanghai)", GROUP)(tg)  # each traveller's legs and share in the plan

        request = containing(tg, GROUP, "needs sign-off")[0]
        tg.press_button(GROUP, request.message_id, user_id=22, index=0)  # a traveller, not an approver
        await tg.wait_for(has("Only the approvers (99)", GROUP), within=10)
        tg.press_button(GROUP, request.message_id, user_id=BOSS, index=1)  # Reject
        await tg.wait_for(has("99 rejected this plan", GROUP), within=10)
        tg.send_text(GROUP, "the hotel is too far from the office", user_id=BOSS)
        await tg.wait_for(has("needs sign-off", GROUP, count=2), within=10)
        assert "too far from the office" in str(llm.requests[2].messages[-1]["content"])
        second = containing(tg, GROUP, "needs sign-off")[-1]
        tg.press_button(GROUP, second.message_id, user_id=BOSS, index=0)  # Approve
        await tg.wait_for(has("Plan approved by 99", GROUP), within=10)
        llm.assert_complete()
        assert tg.violations == []
