"""The team flow in a Telegram group: three travellers named by @username, a question to each at
once, a wrong person refused, the plan with its calendar and cost sheet (sendDocument); and in
another group (a group may get 20 messages a minute) the sign-off: a traveller's press refused,
a rejection with its reason, the plan made again and approved."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.fakes.telegram_api import FakeTelegram
from tests.fakes.telegram_state import StoredMessage
from tests.team_support import party_plan, question_for, team_request
from tests.telegram_support import containing, has, telegram_bot
from tests.test_team_slack import check_exports, until
from tools.ask_human import AskHuman
from tools.collection import ToolCollection
from tools.plan import TripPlan
from tools.submit_plan import SubmitPlan
from tools.terminate import Terminate

LABELS = ("@user11", "@user22", "@user33")
BOSS = 99
FILES = ("team-trip-2026-12-12.ics", "team-trip-2026-12-12-costs.csv")


def _submit(call_id: str) -> dict[str, object]:
    return call("submit_plan", {"summary": "Team plan for Hangzhou.", "plan": party_plan(LABELS)}, id=call_id)


def _message(tg: FakeTelegram, chat_id: int, message_id: int) -> StoredMessage:
    return next(m for m in tg.bot_messages(chat_id) if m.message_id == message_id)


def _tools() -> ToolCollection:
    return ToolCollection([AskHuman(), SubmitPlan(), Terminate()])


async def test_a_team_trip_in_a_telegram_group(tmp_path: Path) -> None:
    group = -100900
    script = [
        reply(tool_calls=[call("ask_human", {"inquire": question_for(label), "to": label}, id=f"call_{i}")
                          for i, label in enumerate(LABELS)]),
        reply(tool_calls=[_submit("call_plan")]),
    ]
    async with FakeOpenAI(script) as llm, FakeTelegram() as tg, \
            telegram_bot(tmp_path, tg, llm.base_url, tools=_tools()) as (runtime, _):
        tg.send_text(group, "@trip_test_bot " + team_request(LABELS), user_id=10)
        for label in LABELS:
            await tg.wait_for(has(question_for(label), group), within=10)

        async def posted() -> list[str]:  # a question is answered only once its posting is recorded
            return [q.addressee for q in await runtime.store.questions_for_chat(f"telegram:{group}:")
                    if q.posted_after is not None]
        await until(posted, list(LABELS))
        asked = {label: containing(tg, group, question_for(label))[0] for label in LABELS}
        assert all(asked[label].text.startswith(label) for label in LABELS)  # each mentions its traveller

        tg.send_text(group, "from 9 am", user_id=33)  # @user33's plain message answers their question
        tg.send_text(group, "user11 leaves at 6!", user_id=44, reply_to=asked["@user11"].message_id)  # not theirs
        await tg.wait_for(has("That question is for @user11", group), within=10)
        tg.send_text(group, "after lunch", user_id=11, reply_to=asked["@user11"].message_id)
        tg.send_text(group, "any time", user_id=22)
        await tg.wait_for(lambda t: len([m for m in t.bot_messages(group) if m.document]) == 2, within=15)
        # each answer reaches the model with who gave it
        assert llm.requests[1].tool_results() == {"call_0": "Ann (@user11): after lunch",
                                                  "call_1": "Ann (@user22): any time", "call_2": "Ann (@user33): from 9 am"}
        assert has("@user22 · Shanghai · pays ¥", group)(tg)  # each traveller's legs and share in the plan
        assert len(containing(tg, group, "That question is for")) == 1
        documents = {m.document.file_name: m.document for m in tg.bot_messages(group) if m.document is not None}
        assert set(documents) == set(FILES)
        check_exports(documents[FILES[0]].content, documents[FILES[1]].content,
                      TripPlan.model_validate(party_plan(LABELS)))
        llm.assert_complete()
        assert tg.violations == []


async def test_a_team_plan_signed_off_in_a_telegram_group(tmp_path: Path) -> None:
    group = -100901
    script = [reply(tool_calls=[_submit("call_plan1")]), reply(tool_calls=[_submit("call_plan2")])]
    async with FakeOpenAI(script) as llm, FakeTelegram() as tg, \
            telegram_bot(tmp_path, tg, llm.base_url, tools=_tools(), approvers=[str(BOSS)]):
        tg.send_text(group, "@trip_test_bot " + team_request(LABELS), user_id=10)
        await tg.wait_for(has("needs sign-off", group), within=10)
        assert not any(m.document for m in tg.bot_messages(group))  # the files come with the approved plan
        request = containing(tg, group, "needs sign-off")[0]
        tg.press_button(group, request.message_id, user_id=22, index=0)  # a traveller, not an approver
        await tg.wait_for(has("Only the approvers (99)", group), within=10)
        tg.press_button(group, request.message_id, user_id=BOSS, index=1)  # Reject
        await tg.wait_for(has("Ann rejected this plan", group), within=10)  # the approver, named by a tg://user link
        assert '<a href="tg://user?id=99">Ann</a> rejected' in containing(tg, group, "rejected this plan")[0].raw
        # the card is decided: it says who rejected it and when, and its buttons are gone
        await tg.wait_for(lambda t: _message(t, group, request.message_id).buttons == [], within=10)
        closed = _message(tg, group, request.message_id)
        assert closed.text.startswith("❌ Plan rejected by Ann at ") and "needs sign-off" in closed.edits[-1]
        assert '<a href="tg://user?id=99">Ann</a>' in closed.raw
        tg.send_text(group, "the hotel is too far from the office", user_id=BOSS)  # the reason, not addressed
        # the re-planned plan's own request (the first one's card no longer asks)
        await tg.wait_for(lambda t: [m.message_id for m in containing(t, group, "needs sign-off")] not in
                          ([], [request.message_id]), within=10)
        assert "too far from the office" in str(llm.requests[1].messages[-1]["content"])
        second = containing(tg, group, "needs sign-off")[-1]
        tg.press_button(group, second.message_id, user_id=BOSS, index=0)  # Approve
        await tg.wait_for(has("Plan approved by Ann", group), within=10)
        await tg.wait_for(lambda t: len([m for m in t.bot_messages(group) if m.document]) == 2, within=10)
        approved = _message(tg, group, second.message_id)  # the card says it all: no buttons, no second notice
        assert approved.text.startswith("✅ Plan approved by Ann at ") and approved.buttons == []
        assert len(containing(tg, group, "approved by Ann")) == 1
        llm.assert_complete()
        assert tg.violations == []


async def test_an_approval_whose_card_is_gone_is_said_in_a_message(tmp_path: Path) -> None:
    group = -100902
    async with FakeOpenAI([reply(tool_calls=[_submit("call_plan")])]) as llm, FakeTelegram() as tg, \
            telegram_bot(tmp_path, tg, llm.base_url, tools=_tools(), approvers=[str(BOSS)]):
        tg.send_text(group, "@trip_test_bot " + team_request(LABELS), user_id=10)
        await tg.wait_for(has("needs sign-off", group), within=10)
        card = containing(tg, group, "needs sign-off")[0]
        tg.press_button(group, card.message_id, user_id=BOSS, index=0)  # Approve
        del tg.chats[group].messages[card.message_id]  # deleted before the bot closes it: nothing to edit
        await tg.wait_for(has("Plan approved by Ann", group), within=10)
        await tg.wait_for(lambda t: len([m for m in t.bot_messages(group) if m.document]) == 2, within=10)
        [said] = containing(tg, group, "Plan approved by Ann")
        assert said.buttons == [] and said.text.endswith(".")  # the decision's own notice, not a card's line
        llm.assert_complete()
        assert tg.violations == []


async def test_a_press_on_a_card_whose_sign_off_is_over_closes_it(tmp_path: Path) -> None:
    group = -100903
    async with FakeOpenAI([reply(tool_calls=[_submit("call_plan")])]) as llm, FakeTelegram() as tg, \
            telegram_bot(tmp_path, tg, llm.base_url, tools=_tools(), approvers=[str(BOSS)], signoff_remind_s=0.2):
        tg.send_text(group, "@trip_test_bot " + team_request(LABELS), user_id=10)
        await tg.wait_for(has("Reminder: this team plan is still waiting", group), within=10)
        first = containing(tg, group, "needs sign-off")[0]
        reminder = containing(tg, group, "Reminder: this team plan")[0]
        assert first.buttons and reminder.buttons  # two cards name the one sign-off
        tg.press_button(group, reminder.message_id, user_id=BOSS, index=0)  # Approve, on the reminder
        await tg.wait_for(lambda t: _message(t, group, reminder.message_id).buttons == [], within=10)
        assert _message(tg, group, reminder.message_id).text.startswith("✅ Plan approved by Ann at ")
        assert _message(tg, group, first.message_id).buttons  # the first card does not know yet

        tg.press_button(group, first.message_id, user_id=BOSS, index=1)  # Reject, on the decided sign-off
        await tg.wait_for(lambda t: _message(t, group, first.message_id).buttons == [], within=10)
        assert _message(tg, group, first.message_id).text.startswith("✅ Plan approved by ")  # what became of it
        await tg.wait_for(lambda t: len([m for m in t.bot_messages(group) if m.document]) == 2, within=10)
        assert not containing(tg, group, "rejected")  # the late press changed nothing
        llm.assert_complete()
        assert tg.violations == []
