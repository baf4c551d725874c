"""The eight failure stories of "One actor per chat", one test each, through the real runtime
with the fakes (and the real Telegram adapter where the story is Telegram's).

Each was written before the redesign and failed on the runtime of that day (see the commit
that added this file); they pin down what the chat's state machine must guarantee.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path
from typing import Any

from agent_core.schema import Function, Message, ToolCall
from bot.store import SqliteStore
from bot.store.base import QuestionRow, TurnStart
from bot.surface import ChatKey
from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.fakes.telegram_api import FakeTelegram
from tests.spine_support import RecordingSurface, make_llm, make_settings, msg, start_runtime
from tests.telegram_support import containing, has, telegram_bot

A = ChatKey("test", "a")
B = ChatKey("test", "b")


def user_texts(request: Any) -> list[str]:
    return [str(m.get("content")) for m in request.messages if m.get("role") == "user"]


async def test_1_a_message_sent_while_the_run_works_never_answers_the_question_asked_after_it(tmp_path):
    gate = asyncio.Event()
    script = [
        reply(tool_calls=[call("lookup", {"city": "Shanghai"})]),
        reply(tool_calls=[call("ask_human", {"inquire": "Which day do you leave?"}, id="call_ask")], gate=gate),
        reply("<answer>Leave Friday, by train.</answer>"),
    ]
    surface = RecordingSurface()
    async with FakeOpenAI(script) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "Plan a trip to Shanghai", dedup="1"))
            await fake.wait_for_requests(2)  # the model is deciding to ask, held by the gate
            await rt.manager.submit(msg(A, "also, I prefer trains", dedup="2"))
            gate.set()
            await surface.wait_count("question", 1)
            await rt.manager.wait_until_idle(A, 5)
            await rt.manager.submit(msg(A, "Friday", dedup="3"))
            await surface.wait_count("answer", 1)
            await rt.manager.wait_until_idle(A, 5)
            fake.assert_complete()
            resumed = fake.requests[2]
            assert resumed.tool_results()["call_ask"] == "Friday"
            assert "also, I prefer trains" in user_texts(resumed)  # it steered the run instead
            assert len(surface.of("answer", A)) == 1
        finally:
            await rt.stop()


async def test_2_answers_arriving_at_any_moment_of_a_pause_give_one_run_each(tmp_path):
    """The story was a park deadline (the waiting coroutine let go) racing the answer. A pause
    now holds nothing in memory; answers arriving at every moment around it must still go on
    exactly once each (the script has no spare turns)."""
    rounds = 12
    script = []
    for i in range(rounds):
        script.append(reply(tool_calls=[call("ask_human", {"inquire": f"Question {i}?"}, id=f"call_{i}")]))
    script.append(reply("<answer>All answered.</answer>"))
    surface = RecordingSurface()
    async with FakeOpenAI(script) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "ask me things", dedup="start"))
            for i in range(rounds):
                await surface.wait_count("question", i + 1)
                await asyncio.sleep(0.005 * (i % 8))  # around the park deadline, on both sides of it
                await rt.manager.submit(msg(A, f"answer {i}", dedup=f"a{i}"))
            await surface.wait_count("answer", 1)
            await rt.manager.wait_until_idle(A, 5)
            fake.assert_complete()
            assert fake.exhausted_count == 0, "a second run asked the model for more"
            last = fake.requests[-1].tool_results()
            assert [last[f"call_{i}"] for i in range(rounds)] == [f"answer {i}" for i in range(rounds)]
        finally:
            await rt.stop()


async def _seed_finished_answers(db: Path, chats: list[ChatKey], asking: list[ChatKey]) -> None:
    """Sessions whose run made its answer and was killed before the run was closed, and others
    whose question was stored but never posted."""
    store = SqliteStore(db)
    await store.open()
    try:
        for i, chat in enumerate([*chats, *asking]):
            await store.add_inbox("test", f"seed-{i}", str(chat), "{}")
            inbox = await store.inbox_for(str(chat))
            turn = TurnStart(str(chat), inbox[0].id, Message.user("plan it"), "en", "u1", "Ann", "plan it", None)
            session = await store.start_turn(turn)
            if chat in chats:
                await store.append(session.id, [Message.assistant(f"<answer>Plan for {chat.chat_id}</answer>")], step=1)
                continue
            ask = Message.assistant(None, tool_calls=[ToolCall(id="call_q", function=Function(name="ask_human", arguments='{"inquire": "When?"}'))])
            question = QuestionRow(session.id, "call_q", "When?", (), "u1", time.time(), time.time() + 3600, None, "waiting")
            await store.pause(session.id, [ask], [question], step=1)
    finally:
        await store.close()


class SlowAnswers(RecordingSurface):
    """Posting an answer takes a moment (a real platform's round trip)."""

    async def post_answer(self, chat: ChatKey, *args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(0.05)
        return await super().post_answer(chat, *args, **kwargs)


async def test_3_after_a_restart_an_answer_already_made_is_delivered_once(tmp_path):
    chats = [ChatKey("test", f"c{i}") for i in range(20)]
    asking = [ChatKey("test", f"q{i}") for i in range(10)]
    settings = make_settings(tmp_path)
    await _seed_finished_answers(settings.db_path, chats, asking)
    surface = SlowAnswers()
    async with FakeOpenAI([]) as fake:
        rt = await start_runtime(settings, make_llm(fake.base_url), surface)
        try:
            await surface.wait_count("answer", len(chats))
            await surface.wait_count("question", len(asking))
            for chat in chats:
                await rt.manager.wait_until_idle(chat, 5)
            assert not await rt.store.pending_outbox()
            counts = {chat.chat_id: len(surface.of("answer", chat)) for chat in chats}
            assert counts == {chat.chat_id: 1 for chat in chats}
            assert fake.request_count == 0
        finally:
            await rt.stop()


class GatedAnswers(RecordingSurface):
    """Posting an answer takes until `release` is set (a slow platform)."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def post_answer(self, chat: ChatKey, *args: Any, **kwargs: Any) -> Any:
        self.entered.set()
        await self.release.wait()
        return await super().post_answer(chat, *args, **kwargs)


async def test_4_cancel_during_the_final_delivery_does_not_cancel_the_delivery(tmp_path):
    surface = GatedAnswers()
    async with FakeOpenAI([reply("<answer>Your plan.</answer>")]) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "plan it", dedup="1"))
            async with asyncio.timeout(5):
                await surface.entered.wait()
            await rt.manager.submit(msg(A, "/cancel", dedup="2"))
            async with asyncio.timeout(5):
                while len(await rt.store.pending_outbox(str(A))) < 2:  # the reply to /cancel is queued
                    await asyncio.sleep(0.01)
            surface.release.set()
            await surface.wait_count("answer", 1)
            await surface.wait_count("notice", 1)  # in order: after the answer it could not stop
            await rt.manager.wait_until_idle(A, 5)
            async with asyncio.timeout(5):
                while await rt.store.pending_outbox():
                    await asyncio.sleep(0.01)  # the row is marked sent right after the post returns
            assert [a.text for a in surface.of("answer", A)] == ["Your plan."]
        finally:
            await rt.stop()


class FlakyQuestions(RecordingSurface):
    """Posting a question fails `failures` times (the platform is down), then works."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures
        self.attempts = 0

    async def post_question(self, chat: ChatKey, *args: Any, **kwargs: Any) -> Any:
        self.attempts += 1
        self._changed.set()
        if self.failures > 0:
            self.failures -= 1
            raise ConnectionError("platform down")
        return await super().post_question(chat, *args, **kwargs)


async def test_5_a_message_sent_before_the_question_was_posted_does_not_answer_it(tmp_path):
    script = [
        reply(tool_calls=[call("ask_human", {"inquire": "Which day?"}, id="call_ask")]),
        reply("<answer>Friday it is.</answer>"),
    ]
    surface = FlakyQuestions(failures=2)
    async with FakeOpenAI(script) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "plan it", dedup="1"))
            await surface.wait_for(lambda s: s.attempts >= 1)
            await rt.manager.submit(msg(A, "hello? are you there?", dedup="2"))  # nobody saw a question yet
            await surface.wait_count("question", 1)
            await rt.manager.submit(msg(A, "Friday", dedup="3"))
            await surface.wait_count("answer", 1)
            await rt.manager.wait_until_idle(A, 5)
            fake.assert_complete()
            assert fake.requests[1].tool_results()["call_ask"] == "Friday"
        finally:
            await rt.stop()


async def _seed_undeliverable(db: Path, chat_ids: list[int]) -> None:
    store = SqliteStore(db)
    await store.open()
    try:
        for chat_id in chat_ids:
            key = f"telegram:{chat_id}:"
            await store.add_inbox("telegram", f"seed-{chat_id}", key, "{}")
            inbox = await store.inbox_for(key)
            turn = TurnStart(key, inbox[0].id, Message.user("plan it"), "en", "u1", "Ann", "plan it", None)
            session = await store.start_turn(turn)
            body = '{"text": "An old plan.", "plan": null, "verdict": null}'
            await store.finish_run(session.id, [Message.assistant("An old plan.")], outbox=[("answer", body)])
    finally:
        await store.close()


async def test_6_undeliverable_rows_never_hold_up_the_start_or_a_new_chat(tmp_path):
    blocked = list(range(9001, 9031))
    settings_db = tmp_path / "bot.sqlite3"
    await _seed_undeliverable(settings_db, blocked)
    async with FakeOpenAI([reply("<answer>Hello, new friend.</answer>")]) as llm, FakeTelegram() as tg:
        for chat_id in blocked:
            tg.block(chat_id)  # the person blocked the bot: 403, for good
        async with asyncio.timeout(10):  # start() must not wait on those rows
            async with telegram_bot(tmp_path, tg, llm.base_url) as (rt, _adapter):
                tg.send_text(777, "hi")
                await tg.wait_for(has("Hello, new friend.", 777), within=5)
                async with asyncio.timeout(5):
                    while await rt.store.pending_outbox():
                        await asyncio.sleep(0.02)  # each blocked row is marked failed, once
        attempts = [r for r in tg.requests if r.method == "sendmessage" and r.chat_id in blocked]
        assert len(attempts) == len(blocked), "a permanent refusal was retried"


async def test_7_a_failure_before_an_update_is_picked_still_answers_the_person(tmp_path):
    script = [reply(tool_calls=[call("ask_human", {"inquire": "When?"})]), reply("<answer>B done.</answer>")]
    surface = RecordingSurface()
    async with FakeOpenAI(script) as fake:
        settings = make_settings(tmp_path)
        rt = await start_runtime(settings, make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "plan A", dedup="1"))
            await surface.wait_count("question", 1, A)
            await rt.manager.wait_until_idle(A, 5)
        finally:
            await rt.stop()
        # while the bot was down, the stored question got damaged: it can no longer be read
        with sqlite3.connect(settings.db_path) as conn:
            conn.execute("UPDATE questions SET options = 'not json'")
        surface = RecordingSurface()
        rt = await start_runtime(settings, make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "Friday", dedup="2"))
            await surface.wait_count("notice", 1, A)
            assert surface.of("notice", A)[0].kind == "error"
            await rt.manager.submit(msg(B, "plan B", dedup="3"))  # other chats go on
            await surface.wait_count("answer", 1, B)
        finally:
            await rt.stop()


async def test_8_a_long_answer_whose_second_part_fails_for_a_while_is_not_sent_twice(tmp_path):
    long_text = "\n".join(f"Day {i}: a long day of sightseeing, museums, tea houses and gardens." for i in range(120))
    async with (
        FakeOpenAI([reply(f"<answer>{long_text}</answer>")]) as llm,
        FakeTelegram() as tg,
        telegram_bot(tmp_path, tg, llm.base_url) as (rt, _adapter),
    ):
        tg.fail_sends(5150, 4, containing="Day 60:")  # the second part meets four 502s
        tg.send_text(5150, "plan a long trip")
        await tg.wait_for(has("Day 119", 5150), within=30)
        await rt.manager.wait_until_idle(ChatKey("telegram", "5150"), 5)
        assert len(containing(tg, 5150, "Day 0:")) == 1
        assert len(containing(tg, 5150, "Day 119:")) == 1
        assert len(containing(tg, 5150, "Day 60:")) == 1
