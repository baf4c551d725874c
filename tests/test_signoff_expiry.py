"""A team plan's sign-off that nobody decides: when its deadline passes, every card of it the chat
was shown (the request and its reminder, both with Approve / Reject) closes, no buttons and
"⌛ Nobody decided by <deadline>", and the expiry is said once. On Telegram (python-telegram-bot
against the fake Bot API) and on Slack (slack-sdk against the fake Web API): a card deleted
meanwhile is skipped and the notice still goes; a notice whose first try fails is retried
without editing a card twice (each card's edit is a part of the notice's row)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from bot.store.base import SignoffRow, Store
from bot.team.cards import when
from tests.fakes.openai_server import FakeOpenAI, Reply, call, reply
from tests.fakes.slack_api import FakeSlack, SlackMessage
from tests.fakes.telegram_api import FakeTelegram
from tests.fakes.telegram_state import StoredMessage
from tests.slack_support import SlackStack, slack_stack
from tests.team_support import TeamScript, party_plan, team_request
from tests.telegram_support import containing, has, telegram_bot
from tests.test_team_slack import LABELS as SLACK_LABELS
from tests.test_team_slack import answer_all, signoff_id, signoff_posts
from tests.test_team_telegram import BOSS, _tools
from tests.test_team_telegram import LABELS as TG_LABELS

EXPIRED = "Nobody signed this plan off by"  # the notice (bot.texts)
REMINDER = "Reminder: this team plan is still waiting"
# the reminder comes at once; the deadline leaves the test time to see both cards with their buttons
REMIND_S, TIMEOUT_S = 0.2, 3.0


async def _expired(store: Store, chat_key: str) -> SignoffRow:
    signoff = await store.signoff_for_chat(chat_key)
    assert signoff is not None and signoff.status == "expired"
    return signoff


def _telegram_cards(tg: FakeTelegram, group: int) -> tuple[StoredMessage, StoredMessage]:
    def message(needle: str) -> StoredMessage:
        return next(m for m in tg.bot_messages(group) if needle in m.text or any(needle in e for e in m.edits))
    return message("needs sign-off"), message(REMINDER)


async def _telegram_team_plan(tg: FakeTelegram, group: int) -> tuple[StoredMessage, StoredMessage]:
    tg.send_text(group, "@trip_test_bot " + team_request(TG_LABELS), user_id=10)
    await tg.wait_for(has(REMINDER, group), within=10)
    request, reminder = _telegram_cards(tg, group)
    assert request.buttons and reminder.buttons  # two live cards name the one sign-off
    return request, reminder


def _plan_script() -> list[Reply]:
    return [reply(tool_calls=[call("submit_plan", {"summary": "Team plan for Hangzhou.",
                                                   "plan": party_plan(TG_LABELS)}, id="call_plan")])]


async def test_telegram_an_expired_sign_off_closes_its_request_and_its_reminder(tmp_path: Path) -> None:
    group = -100910
    async with FakeOpenAI(_plan_script()) as llm, FakeTelegram() as tg, \
            telegram_bot(tmp_path, tg, llm.base_url, tools=_tools(), approvers=[str(BOSS)],
                         signoff_remind_s=REMIND_S, signoff_timeout_s=TIMEOUT_S) as (runtime, _):
        await _telegram_team_plan(tg, group)
        # the notice's first try fails after both cards closed: its retry edits neither again
        tg.fail_sends(group, 1, containing=EXPIRED)
        await tg.wait_for(has(EXPIRED, group), within=10)
        signoff = await _expired(runtime.store, f"telegram:{group}:")
        line = f"⌛ Nobody decided by {when(signoff.deadline, runtime.settings.timezone)}"
        for card in _telegram_cards(tg, group):
            assert (card.text, card.buttons) == (line, [])
            assert len(card.edits) == 1  # closed once
        assert len(containing(tg, group, EXPIRED)) == 1  # said once
        assert [c.ok for c in tg.calls("sendMessage") if c.chat_id == group].count(False) == 1  # the failed try
        # a card edited again would be refused as "not modified": none was
        assert all(c.ok for c in tg.calls("editMessageText") if c.chat_id == group)
        llm.assert_complete()
        assert tg.violations == []


async def test_telegram_a_deleted_card_is_skipped_and_the_expiry_still_said(tmp_path: Path) -> None:
    group = -100911
    async with FakeOpenAI(_plan_script()) as llm, FakeTelegram() as tg, \
            telegram_bot(tmp_path, tg, llm.base_url, tools=_tools(), approvers=[str(BOSS)],
                         signoff_remind_s=REMIND_S, signoff_timeout_s=TIMEOUT_S) as (runtime, _):
        request, reminder = await _telegram_team_plan(tg, group)
        del tg.chats[group].messages[request.message_id]  # deleted in the chat: nothing to edit
        await tg.wait_for(has(EXPIRED, group), within=10)
        signoff = await _expired(runtime.store, f"telegram:{group}:")
        closed = next(m for m in tg.bot_messages(group) if m.message_id == reminder.message_id)
        assert closed.text.startswith("⌛ Nobody decided by ") and closed.buttons == []
        assert when(signoff.deadline, runtime.settings.timezone) in closed.text
        assert len(containing(tg, group, EXPIRED)) == 1
        llm.assert_complete()
        assert tg.violations == []


async def _slack_team_plan(s: SlackStack) -> tuple[str, SlackMessage, SlackMessage]:
    msg = s.mention(user="U0LEAD", text=team_request(SLACK_LABELS))
    await s.events.app_mention(msg)
    await answer_all(s, msg.ts)
    await s.fake.wait_for(lambda f: any(m.text.startswith("Reminder") for m in f.bot_posts("C1", msg.ts)), 10)
    [request] = signoff_posts(s, msg.ts)
    [reminder] = [m for m in s.fake.bot_posts("C1", msg.ts) if m.text.startswith("Reminder")]
    assert signoff_id(reminder) == signoff_id(request)
    assert request.button_values() and reminder.button_values()  # two live cards
    return msg.ts, request, reminder


def _slack_expired(s: SlackStack, thread_ts: str) -> list[SlackMessage]:
    return [m for m in s.fake.bot_posts("C1", thread_ts) if EXPIRED in m.text]


@asynccontextmanager
async def _slack(tmp_path: Path) -> AsyncIterator[SlackStack]:
    settings = {"BOT_APPROVERS": "U0BOSS", "BOT_SIGNOFF_REMIND_S": REMIND_S, "BOT_SIGNOFF_TIMEOUT_S": TIMEOUT_S}
    async with FakeSlack(channels={"C1": "channel"}) as fake:
        fake.members["C1"] = ["UBOT", "U0LEAD", "U0BOSS", *(label.strip("<@>") for label in SLACK_LABELS)]
        async with slack_stack(tmp_path, model=TeamScript(SLACK_LABELS), fake=fake, **settings) as s:  # type: ignore[arg-type]
            yield s


async def test_slack_an_expired_sign_off_closes_its_request_and_its_reminder(tmp_path: Path) -> None:
    async with _slack(tmp_path) as s:
        thread, request, reminder = await _slack_team_plan(s)
        await s.fake.wait_for(lambda f: bool(_slack_expired(s, thread)), 10)
        signoff = await _expired(s.runtime.store, f"slack:C1:{thread}")
        line = f"⌛ Nobody decided by {when(signoff.deadline, s.runtime.settings.timezone)}"
        for card in (request, reminder):
            assert card.text == line and not card.button_values() and card.edits == 1
        assert len(_slack_expired(s, thread)) == 1  # said once, after the cards closed
        updates = [c.args.get("ts") for c in s.fake.calls_of("chat.update") if c.args.get("ts") in
                   (request.ts, reminder.ts)]
        assert updates == [request.ts, reminder.ts]


async def test_slack_a_deleted_card_is_skipped_and_the_expiry_still_said(tmp_path: Path) -> None:
    async with _slack(tmp_path) as s:
        thread, request, reminder = await _slack_team_plan(s)
        s.fake.messages["C1"].remove(reminder)  # deleted in the thread: nothing to update
        await s.fake.wait_for(lambda f: bool(_slack_expired(s, thread)), 10)
        assert request.text.startswith("⌛ Nobody decided by ") and not request.button_values()
        refused = [c for c in s.fake.calls_of("chat.update") if c.args.get("ts") == reminder.ts]
        assert [c.error for c in refused] == ["message_not_found"]  # tried once, skipped
        assert len(_slack_expired(s, thread)) == 1
