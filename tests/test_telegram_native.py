"""Telegram's newer Bot API, end to end (the real python-telegram-bot against the fake Bot API, the
real runtime, the LLM client streaming from the fake OpenAI server): the stop button on a draft
(Bot API 10.3) is the chat's Stop; forum topics, in groups and in private chats, keep one
conversation each, and everything of a conversation goes to its topic; a deleted topic fails
that delivery only; in groups a reply to the bot addresses it (the topic's first message does
not count); guest mode (Bot API 10.0) answers through guest queries with the same binding rules."""

from __future__ import annotations

import asyncio
import logging

import pytest

from adapters.telegram.adapter import ALLOWED_UPDATES
from bot.surface import ChatKey
from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.fakes.telegram_api import FakeTelegram
from tests.telegram_support import containing, has, telegram_bot

CHAT = 4242
GROUP = -100888
ANSWER = ("Day 1: the West Lake by bike in the morning, Lingyin Temple after lunch.\n"
          "Day 2: tea fields at Longjing, then the night market on Hefang Street.")


def stoppable_drafts(tg: FakeTelegram, chat: int) -> list[int]:
    return [c.draft_id for c in tg.draft_calls if c.chat_id == chat and c.text and c.can_stop]


async def test_the_stop_button_on_a_draft_stops_the_run_and_keeps_what_was_written(tmp_path) -> None:
    script = [reply(ANSWER, chunk_chars=2, chunk_gap_ms=20, hold_after=15, hold_gate="never"),
              reply("<answer>Short version: West Lake.</answer>")]
    async with FakeOpenAI(script) as llm, FakeTelegram() as tg, telegram_bot(tmp_path, tg, llm.base_url):
        tg.send_text(CHAT, "Two days in Hangzhou")
        await tg.wait_for(lambda t: any("Day 1: the" in c.text for c in t.draft_calls), within=10)
        assert {"stopped_message_generation", "guest_message"} <= set(tg.allowed_updates or ())
        tg.stop_draft(CHAT, stoppable_drafts(tg, CHAT)[-1])
        await tg.wait_for(has("Stopped while the answer was being written", CHAT), within=10)
        assert "Day 1: the" in containing(tg, CHAT, "Stopped while")[0].text  # what was written is kept
        await llm.wait_for(lambda f: f.requests[0].outcome == "disconnected")  # the model stops writing
        tg.send_text(CHAT, "shorter please")
        await tg.wait_for(has("Short version", CHAT), within=10)
        llm.assert_complete()
        assert tg.violations == []


async def test_a_stop_on_the_draft_of_a_run_that_ended_stops_nothing(tmp_path) -> None:
    script = [reply("<answer>First: the West Lake, then tea at Longjing.</answer>", chunk_chars=3, chunk_gap_ms=15),
              reply(ANSWER, chunk_chars=2, chunk_gap_ms=20, hold_after=10, hold_gate="go")]
    async with FakeOpenAI(script) as llm, FakeTelegram() as tg, telegram_bot(tmp_path, tg, llm.base_url):
        tg.send_text(CHAT, "Two days in Hangzhou")
        await tg.wait_for(has("First: the West Lake", CHAT), within=10)
        old = stoppable_drafts(tg, CHAT)[-1]
        tg.send_text(CHAT, "and the food?")
        await tg.wait_for(lambda t: any(d != old for d in stoppable_drafts(t, CHAT)), within=10)  # the next run's draft
        tg.stop_draft(CHAT, old)  # a stop left on the first run's draft
        await tg.wait_for(has("already ended", CHAT), within=10)
        llm.gate("go").set()
        await tg.wait_for(has("Hefang Street", CHAT), within=10)  # the run working now was not stopped
        assert not containing(tg, CHAT, "Stopped while")
        llm.assert_complete()


async def test_forum_topics_keep_their_own_conversations(tmp_path) -> None:
    script = [reply(tool_calls=[call("ask_human", {"inquire": "Which day for Hangzhou?"}, id="call_a")]),
              reply("<answer>Xi'an: the Terracotta Army.</answer>"),
              reply("<answer>Hangzhou on Friday.</answer>")]
    async with FakeOpenAI(script) as llm, FakeTelegram() as tg, telegram_bot(tmp_path, tg, llm.base_url):
        a = tg.create_topic(GROUP, "Hangzhou")
        b = tg.create_topic(GROUP, "Xi'an")
        tg.send_text(GROUP, "@trip_test_bot plan Hangzhou", user_id=7, thread=a)
        await tg.wait_for(has("Which day for Hangzhou?", GROUP), within=10)
        assert containing(tg, GROUP, "Which day for Hangzhou?")[0].thread == a
        # the same person, in the other topic: a conversation of its own, not the answer
        tg.send_text(GROUP, "@trip_test_bot plan Xi'an", user_id=7, thread=b)
        await tg.wait_for(has("Terracotta", GROUP), within=10)
        assert containing(tg, GROUP, "Terracotta")[0].thread == b
        tg.send_text(GROUP, "Friday", user_id=7, thread=a)
        await tg.wait_for(has("Hangzhou on Friday", GROUP), within=10)
        assert containing(tg, GROUP, "Hangzhou on Friday")[0].thread == a
        assert llm.requests[2].tool_results()["call_a"].endswith(": Friday")  # a group's answer carries its sender
        assert "Xi'an" not in str(llm.requests[2].messages)  # topic b's conversation is not topic a's
        assert {m.thread for m in tg.bot_messages(GROUP)} == {a, b}  # nothing went to the chat outside them
        assert set(tg.chats[GROUP].action_threads) <= {a, b}
        llm.assert_complete()


async def test_a_private_chat_with_topics_streams_and_answers_in_the_topic(tmp_path) -> None:
    async with FakeOpenAI([reply(f"<answer>{ANSWER}</answer>", chunk_chars=5, chunk_gap_ms=15)]) as llm, \
            FakeTelegram() as tg, telegram_bot(tmp_path, tg, llm.base_url):
        topic = tg.create_topic(CHAT, "Weekend", chat_type="private")
        tg.send_text(CHAT, "Two days in Hangzhou", thread=topic)
        await tg.wait_for(has("Hefang Street", CHAT), within=10)
        assert containing(tg, CHAT, "Hefang Street")[0].thread == topic
        drafts = [c for c in tg.draft_calls if c.chat_id == CHAT]
        assert drafts and {c.thread for c in drafts} == {topic}
        llm.assert_complete()


async def test_a_deleted_topic_fails_that_delivery_only(tmp_path, caplog: pytest.LogCaptureFixture) -> None:
    script = [reply("<answer>For the first topic.</answer>", gate="first"), reply("<answer>For the second topic.</answer>")]
    caplog.set_level(logging.WARNING, logger="adapters.telegram")
    async with FakeOpenAI(script) as llm, FakeTelegram() as tg, \
            telegram_bot(tmp_path, tg, llm.base_url) as (runtime, _):
        a = tg.create_topic(GROUP, "First")
        b = tg.create_topic(GROUP, "Second")
        tg.send_text(GROUP, "@trip_test_bot plan something", user_id=7, thread=a)
        await llm.wait_for_requests(1)
        tg.delete_topic(GROUP, a)
        llm.gate("first").set()
        key = str(ChatKey("telegram", str(GROUP), str(a)))
        async with asyncio.timeout(10):
            while not await runtime.store.failed_outbox(key):
                await asyncio.sleep(0.05)  # the outcome is in the store: there is no event to wait on
        [failed] = await runtime.store.failed_outbox(key)
        assert "was deleted" in (failed.error or "")
        assert f"topic {a} of chat {GROUP} was deleted" in caplog.text
        tg.send_text(GROUP, "@trip_test_bot and here?", user_id=7, thread=b)
        await tg.wait_for(has("For the second topic.", GROUP), within=10)  # the other topic goes on
        refused = [r for r in tg.requests if not r.ok and "thread not found" in (r.error or "")]
        assert len(refused) <= 3  # the answer, and at most its progress and typing once each: never retried
        llm.assert_complete()


async def test_in_a_group_a_reply_to_the_bot_addresses_it_and_a_topic_it_opened_does_not(tmp_path) -> None:
    script = [reply("<answer>Plan A: the Bund.</answer>"), reply("<answer>Plan B: cheaper, by metro.</answer>")]
    async with FakeOpenAI(script) as llm, FakeTelegram() as tg, telegram_bot(tmp_path, tg, llm.base_url):
        tg.send_text(GROUP, "@trip_test_bot plan Shanghai", user_id=7)
        await tg.wait_for(has("Plan A", GROUP), within=10)
        answer = containing(tg, GROUP, "Plan A")[0]
        tg.send_text(GROUP, "hello all", user_id=8)  # neither a mention nor a reply: not for the bot
        opened = tg.create_topic(GROUP, "Trip", by_bot=True)
        tg.send_text(GROUP, "chatting in the bot's topic", user_id=9, thread=opened)  # "replies" to the bot's topic start only
        # a reply is for the bot; from the requester it changes the trip (from anyone else it would be
        # kept as a suggestion: tests/test_who_said_what_telegram.py)
        tg.send_text(GROUP, "make it cheaper", user_id=7, reply_to=answer.message_id)
        await tg.wait_for(has("Plan B", GROUP), within=10)
        assert llm.requests[1].messages[-1]["content"].endswith(": make it cheaper")  # with its sender, in a group
        assert not any("hello all" in str(r.messages) or "chatting" in str(r.messages) for r in llm.requests)
        llm.assert_complete()


async def test_guest_mode_answers_through_guest_queries_with_the_same_binding_rules(tmp_path) -> None:
    guest_group = -100999
    script = [reply(tool_calls=[call("ask_human", {"inquire": "Which day do you leave?"}, id="call_day")]),
              reply("<answer>Hangzhou on Friday: the West Lake.</answer>")]
    async with FakeOpenAI(script) as llm, FakeTelegram() as tg, telegram_bot(tmp_path, tg, llm.base_url):
        tg.send_guest_text(guest_group, "@trip_test_bot plan Hangzhou", user_id=7)
        await tg.wait_for(lambda t: len(t.guest_answers) == 1, within=10)
        question = tg.guest_message(next(iter(tg.guest_answers.values())))
        assert question is not None and "Which day do you leave?" in question.text
        tg.send_guest_text(guest_group, "@trip_test_bot Saturday", user_id=8)  # not the asker: not the answer
        await tg.wait_for(lambda t: len(t.guest_answers) == 2, within=10)
        tg.send_guest_text(guest_group, "@trip_test_bot Friday", user_id=7)
        await tg.wait_for(lambda t: any("Hangzhou on Friday" in m.text for m in t.bot_messages(guest_group)), within=10)
        assert llm.requests[1].tool_results()["call_day"].endswith(": Friday")  # a group's answer carries its sender
        assert len(tg.guest_answers) == 3  # one answer per summons, each through its own query
        sent = [r for r in tg.requests if r.chat_id == guest_group and r.method != "answerguestquery"]
        assert sent == []  # no message, progress, typing or draft where the bot is no member
        assert "guest_message" in ALLOWED_UPDATES
        llm.assert_complete()
