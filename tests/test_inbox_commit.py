"""A message is stored in its chat's inbox, committed, before anything acts on it, and the run it
starts begins only once its turn is committed too. A message that cannot be stored starts
nothing; messages stored one after another are applied in that order."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from bot.surface import ChatKey, SubmitOutcome
from tests.fakes.openai_server import FakeOpenAI, RecordedRequest, Reply, call, reply
from tests.spine_support import RecordingSurface, make_llm, make_settings, msg, start_runtime

A = ChatKey("test", "committed")


def committed(tmp_path: Path, sql: str) -> list[tuple[object, ...]]:
    """What another connection reads: only what is committed."""
    with sqlite3.connect(tmp_path / "bot.sqlite3") as conn:
        return conn.execute(sql).fetchall()


async def test_the_model_is_asked_only_once_the_turn_and_then_the_answer_are_committed(tmp_path):
    seen: list[dict[str, object]] = []

    def respond(request: RecordedRequest) -> Reply:  # runs as the request arrives
        seen.append({
            "inbox": committed(tmp_path, "SELECT status FROM inbox ORDER BY id"),
            "sessions": committed(tmp_path, "SELECT state FROM sessions"),
            "messages": [body for (body,) in committed(tmp_path, "SELECT body FROM messages ORDER BY seq")],
            "questions": committed(tmp_path, "SELECT status FROM questions"),
        })
        if len(seen) == 1:
            return reply(tool_calls=[call("ask_human", {"inquire": "Which day?"}, id="call_day")])
        return reply("Friday it is.")

    surface = RecordingSurface()
    async with FakeOpenAI(responder=respond) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            assert await rt.manager.submit(msg(A, "Plan a trip", dedup="d1")) is SubmitOutcome.ACCEPTED
            await surface.wait_count("question", 1)
            await rt.manager.submit(msg(A, "Friday", dedup="d2"))
            await surface.wait_count("answer", 1)
        finally:
            await rt.stop()
    first, second = seen
    # the turn: its row done, the session working, the message stored, all before the model's first call
    assert first["inbox"] == [("done",)] and first["sessions"] == [("working",)]
    assert len(first["messages"]) == 1 and "Plan a trip" in str(first["messages"])  # type: ignore[arg-type]
    # the answer: stored as the question's tool result, its row done, before the run goes on
    assert second["questions"] == [("answered",)] and second["inbox"] == [("done",), ("done",)]
    assert second["sessions"] == [("working",)] and '"tool_call_id":"call_day"' in str(second["messages"])


async def test_a_message_that_cannot_be_stored_starts_nothing_and_can_be_sent_again(tmp_path):
    surface = RecordingSurface()
    async with FakeOpenAI([reply("Here is your trip.")]) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            with sqlite3.connect(tmp_path / "bot.sqlite3") as conn:  # the database refuses the row
                conn.execute("CREATE TRIGGER refuse BEFORE INSERT ON inbox "
                             "BEGIN SELECT RAISE(ABORT, 'disk full'); END")
            with pytest.raises(sqlite3.IntegrityError, match="disk full"):
                await rt.manager.submit(msg(A, "Plan a trip", dedup="d1"))
            assert not rt.manager.chats.busy(str(A))  # no actor was woken for it
            assert fake.request_count == 0 and surface.posted == []
            assert await rt.manager.store.get_session(str(A)) is None
            with sqlite3.connect(tmp_path / "bot.sqlite3") as conn:
                conn.execute("DROP TRIGGER refuse")
            # nothing of it was half done: the platform's retry of the same update is stored and runs
            assert await rt.manager.submit(msg(A, "Plan a trip", dedup="d1")) is SubmitOutcome.ACCEPTED
            await surface.wait_count("answer", 1)
            fake.assert_complete()
        finally:
            await rt.stop()


async def test_messages_stored_one_after_another_reach_the_run_in_that_order(tmp_path):
    surface = RecordingSurface()
    async with FakeOpenAI() as fake:
        gate = fake.gate("slow")
        fake.add(reply(tool_calls=[call("lookup", {"city": "Xi'an"})], gate=gate), reply("done"))
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "first request"))
            await fake.wait_for_requests(1)
            later = [f"and {i}" for i in range(5)]
            outcomes = await asyncio.gather(*(rt.manager.submit(msg(A, text)) for text in later))
            assert outcomes == [SubmitOutcome.ACCEPTED] * len(later)
            stored = [str(body) for (body,) in committed(tmp_path, "SELECT body FROM inbox ORDER BY id")]
            order = [text for body in stored for text in later if f'"{text}"' in body]
            await surface.wait_for(lambda s: sum(1 for n in s.of("notice") if n.kind == "queued") == len(later))
            gate.set()
            await surface.wait_count("answer", 1)
            await rt.manager.wait_until_idle(A, 5)
            user_texts = [m["content"] for m in fake.requests[-1].messages if m["role"] == "user"]
            assert user_texts == ["first request", *order]  # in the order they were stored
            fake.assert_complete()
        finally:
            await rt.stop()
