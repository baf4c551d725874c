"""Streaming and Stop on Telegram, end to end (the real python-telegram-bot against the fake Bot
API, the real runtime, the LLM client streaming from the fake OpenAI server): drafts in private
chats, the edited progress message in groups and where drafts are refused, the Stop button, a
reminder replying to its question; and the fake's sendMessageDraft as strict as the Bot API."""

from __future__ import annotations

import httpx
import pytest

from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.fakes.telegram_api import FakeTelegram
from tests.telegram_support import containing, has, telegram_bot

pytestmark = pytest.mark.slow  # long: handed out first under xdist (tests/conftest.py)

CHAT = 4242
GROUP = -100777
ANSWER = ("Day 1: the West Lake by bike in the morning, Lingyin Temple after lunch.\n"
          "Day 2: tea fields at Longjing, then the night market on Hefang Street.")


async def test_a_private_chat_streams_the_answer_as_drafts_then_sends_it(tmp_path):
    async with FakeOpenAI([reply(f"<answer>{ANSWER}</answer>", chunk_chars=5, chunk_gap_ms=15)]) as llm, \
            FakeTelegram() as tg, telegram_bot(tmp_path, tg, llm.base_url) as (_, adapter):
        tg.send_text(CHAT, "Two days in Hangzhou")
        await tg.wait_for(has("Hefang Street", CHAT), within=10)
        drafts = tg.drafts[CHAT]
        assert len(drafts) >= 2 and len({d for d, _, _ in drafts}) == 1 and drafts[0][0] != 0
        assert all(ANSWER.startswith(text) for _, text, _ in drafts)  # previews of the answer, growing
        assert adapter.drafts_seen[-1].text.strip() == ANSWER  # what streamed is the final text
        answer = containing(tg, CHAT, "Hefang Street")[0]
        assert answer.text == ANSWER
        assert tg.violations == []
        llm.assert_complete()


async def test_a_group_shows_the_last_lines_in_the_progress_message_and_its_stop_button_stops(tmp_path):
    script = [reply(tool_calls=[call("lookup", {"city": "Hangzhou"}, id="call_l1")], latency_ms=1100),
              reply(ANSWER, chunk_chars=2, chunk_gap_ms=150),  # still writing while the test presses Stop
              reply("<answer>Short version: West Lake.</answer>")]
    async with FakeOpenAI(script) as llm, FakeTelegram() as tg, telegram_bot(tmp_path, tg, llm.base_url):
        tg.send_text(GROUP, "@trip_test_bot two days in Hangzhou", user_id=7)
        # the text as it is written shows in the progress message (each edit a group's gap after the last)
        await tg.wait_for(lambda t: any("✍️" in m.text and "West Lake" in m.text for m in t.bot_messages(GROUP)),
                          within=10)
        progress = tg.bot_messages(GROUP)[0]
        assert "✍️" in progress.text and "West Lake" in progress.text and GROUP not in tg.drafts
        [[stop]] = progress.reply_markup["inline_keyboard"]  # type: ignore[index]
        assert stop["callback_data"].startswith("stop:") and len(stop["callback_data"].encode()) <= 64  # names its run
        tg.press_button(GROUP, progress.message_id, user_id=8)  # not the asker: refused
        await tg.wait_for(has("Only the person who asked", GROUP), within=10)
        tg.press_button(GROUP, progress.message_id, user_id=7)
        await tg.wait_for(has("Stopped while the answer was being written", GROUP), within=10)
        stopped = containing(tg, GROUP, "Stopped while")[0]
        assert "Day 1: the West Lake" in stopped.text  # the part written is kept for the person
        await tg.wait_for(lambda t: t.bot_messages(GROUP)[0].reply_markup is None, within=10)  # the button goes
        tg.send_text(GROUP, "@trip_test_bot shorter please", user_id=7)
        await tg.wait_for(has("Short version", GROUP), within=10)
        llm.assert_complete()
        assert tg.violations == []


async def test_a_stop_button_left_from_an_earlier_run_does_not_stop_the_run_working_now(tmp_path):
    script = [reply(tool_calls=[call("lookup", {"city": "Hangzhou"}, id="call_l1")], latency_ms=1100),
              reply("<answer>Short version: West Lake.</answer>"),
              reply(tool_calls=[call("lookup", {"city": "Suzhou"}, id="call_l2")], latency_ms=1100),
              reply(ANSWER, chunk_chars=2, chunk_gap_ms=100)]  # still writing while the old button is pressed
    async with FakeOpenAI(script) as llm, FakeTelegram() as tg, telegram_bot(tmp_path, tg, llm.base_url):
        tg.send_text(GROUP, "@trip_test_bot two days in Hangzhou", user_id=7)
        await tg.wait_for(lambda t: any(m.reply_markup for m in t.bot_messages(GROUP)), within=10)
        first = next(m for m in tg.bot_messages(GROUP) if m.reply_markup)
        [[old]] = first.reply_markup["inline_keyboard"]  # type: ignore[index]
        await tg.wait_for(has("Short version", GROUP), within=10)
        tg.send_text(GROUP, "@trip_test_bot and Suzhou?", user_id=7)
        await tg.wait_for(lambda t: any(m.reply_markup and m.message_id != first.message_id
                                        for m in t.bot_messages(GROUP)), within=10)
        second = next(m for m in tg.bot_messages(GROUP) if m.reply_markup and m.message_id != first.message_id)
        [[current]] = second.reply_markup["inline_keyboard"]  # type: ignore[index]
        assert current["callback_data"] != old["callback_data"]
        tg.press_button(GROUP, first.message_id, user_id=7, data=old["callback_data"])  # a button left on screen
        await tg.wait_for(has("already ended", GROUP), within=10)
        await tg.wait_for(has("Hefang Street", GROUP), within=15)  # the run working now was not stopped
        assert not containing(tg, GROUP, "Stopped while")
        llm.assert_complete()
        assert tg.violations == []


async def test_a_refused_draft_falls_back_to_progress_edits_and_the_answer_arrives(tmp_path):
    async with FakeOpenAI([reply(tool_calls=[call("lookup", {"city": "Hangzhou"})], latency_ms=1100),
                           reply(f"<answer>{ANSWER}</answer>", chunk_chars=5, chunk_gap_ms=100)]) as llm, \
            FakeTelegram() as tg, telegram_bot(tmp_path, tg, llm.base_url):
        tg.refuse_drafts.add(CHAT)
        tg.send_text(CHAT, "Two days in Hangzhou")
        # the progress message shows the text too ("✍️"): wait for the answer's own message
        await tg.wait_for(lambda t: any(m.text == ANSWER for m in t.bot_messages(CHAT)), within=10)
        await tg.wait_for(lambda t: any("✍️" in e for e in [*t.bot_messages(CHAT)[0].edits, t.bot_messages(CHAT)[0].text]),
                          within=10)  # the text was shown while it was written
        assert [r for r in tg.requests if r.method == "sendmessagedraft" and not r.ok]
        answers = [m for m in tg.bot_messages(CHAT) if m.text == ANSWER]
        assert len(answers) == 1  # never lost, never twice
        llm.assert_complete()


async def test_a_reminder_replies_to_the_question(tmp_path):
    script = [reply(tool_calls=[call("ask_human", {"inquire": "Which day do you leave?"}, id="call_ask")])]
    async with FakeOpenAI(script) as llm, FakeTelegram() as tg, \
            telegram_bot(tmp_path, tg, llm.base_url, remind_after_s=0.5):
        tg.send_text(CHAT, "Plan Hangzhou")
        await tg.wait_for(has("Which day do you leave?", CHAT), within=10)
        await tg.wait_for(has("A reminder", CHAT), within=10)
        question = containing(tg, CHAT, "Which day do you leave?")[0]
        reminder = containing(tg, CHAT, "A reminder")[0]
        assert reminder.reply_to == question.message_id


@pytest.mark.parametrize(("params", "error"), [
    ({"chat_id": GROUP, "draft_id": 1, "text": "hi"}, "TEXTDRAFT_PEER_INVALID"),
    ({"chat_id": CHAT, "draft_id": 0, "text": "hi"}, "draft_id must be non-zero"),
    ({"chat_id": CHAT, "text": "hi"}, "draft_id must be non-zero"),
    ({"chat_id": CHAT, "draft_id": 3, "text": "hi", "message_thread_id": 77}, "message thread not found"),
    ({"chat_id": CHAT, "draft_id": 3, "text": "hi", "can_stop": "maybe"}, "can't parse can_stop"),
    ({"chat_id": CHAT, "draft_id": 3, "text": "x" * 4097}, "message is too long"),
])
async def test_the_fake_refuses_drafts_the_bot_api_refuses(params, error):
    async with FakeTelegram() as tg:
        tg.send_text(CHAT, "hi")
        tg.send_text(GROUP, "hi")
        async with httpx.AsyncClient() as client:
            res = await client.post(f"{tg.base_url}{tg.token}/sendMessageDraft", json=params)
        assert res.status_code == 400 and error in res.json()["description"]
        ok = await httpx.AsyncClient().post(f"{tg.base_url}{tg.token}/sendMessageDraft",
                                            json={"chat_id": CHAT, "draft_id": 9, "text": "x" * 4096})
        assert ok.json() == {"ok": True, "result": True}
        # Bot API 10.0: an empty text is the "Thinking…" placeholder, not an error
        async with httpx.AsyncClient() as client:
            thinking = await client.post(f"{tg.base_url}{tg.token}/sendMessageDraft",
                                         json={"chat_id": CHAT, "draft_id": 9, "text": ""})
        assert thinking.json() == {"ok": True, "result": True} and tg.drafts[CHAT][-1][1] == ""
