"""Stop and reminders through the real runtime (real store, actor, LLM client streaming from the
fake OpenAI server): a Stop in the middle of a model call and of a tool keeps what was written
and leaves a history the API accepts; a Stop twice, after the run, from someone else in a group;
a stream broken by the model; one reminder per question, across restarts."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from agent_core.events import TextDelta
from agent_core.memory import Memory
from agent_core.schema import Role
from bot.store import SqliteStore
from bot.surface import ChatKey, Notice
from tests.fakes.openai_server import FakeOpenAI, RecordedRequest, call, reply
from tests.spine_support import (
    RecordingSurface,
    make_llm,
    make_settings,
    make_tools,
    msg,
    start_runtime,
)

A = ChatKey("test", "a")
LONG = "Day 1: the Forbidden City in the morning, then Jingshan Park for the view at sunset."


def deltas(surface: RecordingSurface) -> str:
    return "".join(e.text for e in surface.of("progress", A) if isinstance(e, TextDelta))


def notices(surface: RecordingSurface, kind: str | None = None) -> list[Notice]:
    return [n for n in surface.of("notice", A) if kind is None or n.kind == kind]


def disconnected(request: RecordedRequest) -> bool:
    return request.outcome == "disconnected"


async def test_a_streamed_answer_reaches_the_surface_as_deltas_equal_to_the_answer(tmp_path: Path) -> None:
    surface = RecordingSurface()
    async with FakeOpenAI([reply(LONG, chunk_chars=6)]) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "plan Beijing"))
            await surface.wait_count("answer", 1)
            assert deltas(surface) == surface.of("answer", A)[0].text == LONG
            assert len([e for e in surface.of("progress", A) if isinstance(e, TextDelta)]) > 5
            fake.assert_complete()
        finally:
            await rt.stop()


async def test_stop_in_the_middle_of_the_model_call_keeps_the_partial_answer_and_the_chat_goes_on(tmp_path: Path) -> None:
    surface = RecordingSurface()
    script = [
        reply(tool_calls=[call("lookup", {"city": "Beijing"}, id="call_l1")]),
        reply(LONG, chunk_chars=6, hold_after=5, hold_gate="never"),  # writes 4 pieces, then keeps writing
        reply("<answer>Shorter: Day 1, the Forbidden City.</answer>"),
    ]
    async with FakeOpenAI(script) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "plan Beijing"))
            await surface.wait_for(lambda s: len(deltas(s)) >= 24)
            shown = deltas(surface)
            await rt.manager.submit(msg(A, "/stop"))
            await surface.wait_for(lambda s: bool(notices(s, "cancelled")))
            await fake.wait_for(lambda f: disconnected(f.requests[1]))  # the model call itself was cancelled
            [stopped] = notices(surface, "cancelled")
            assert stopped.text.startswith(shown.strip()) and "Stopped while the answer was being written" in stopped.text
            await rt.manager.wait_until_idle(A, 5)
            await rt.manager.submit(msg(A, "/stop"))  # twice: nothing is running now
            await surface.wait_for(lambda s: any("nothing to stop" in n.text for n in notices(s)))
            await rt.manager.submit(msg(A, "make it shorter"))
            await surface.wait_count("answer", 1)
            fake.assert_complete()
            resumed = fake.requests[2].messages
            assert resumed[-2] == {"role": "assistant", "content": f"{shown.strip()} …"}  # the partial, in history
            assert resumed[-1]["content"] == "make it shorter"
        finally:
            await rt.stop()


async def test_stop_in_the_middle_of_a_tool_keeps_the_results_made_and_answers_every_call(tmp_path: Path) -> None:
    surface = RecordingSurface()
    script = [
        reply("Looking it up.", tool_calls=[call("lookup", {"city": "Beijing"}, id="call_l1"),
                                            call("wait_file", {"tag": "t"}, id="call_w1")]),
        reply("<answer>Continuing without the slow lookup.</answer>"),
    ]
    async with FakeOpenAI(script) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface, make_tools(tmp_path))
        try:
            await rt.manager.submit(msg(A, "plan Beijing"))
            async with asyncio.timeout(10):
                while not (tmp_path / "started-t").exists():  # the slow tool is running
                    await asyncio.sleep(0.01)
            await rt.manager.submit(msg(A, "/stop"))
            await surface.wait_for(lambda s: bool(notices(s, "cancelled")))
            assert "wait_file" in notices(surface, "cancelled")[0].text
            await rt.manager.wait_until_idle(A, 5)
            info = await rt.manager.session_info(A)
            assert info is not None and info.state == "idle"
            store = rt.manager.store
            session = await store.get_session(str(A))
            assert session is not None
            history = await store.load_messages(session.id)
            assert Memory(history).unanswered_calls() == []
            results = {m.tool_call_id: m.content for m in history if m.role is Role.TOOL}
            assert "sunny" in (results["call_l1"] or "")  # the lookup had finished: its result is kept
            assert (results["call_w1"] or "").startswith("Cancelled")
            await rt.manager.submit(msg(A, "go on"))  # the fake refuses a history with an unanswered call
            await surface.wait_count("answer", 1)
            fake.assert_complete()
        finally:
            await rt.stop()


async def test_in_a_group_only_the_asker_can_stop_the_run(tmp_path: Path) -> None:
    surface = RecordingSurface()
    script = [reply(LONG, chunk_chars=6, hold_after=3, hold_gate="go")]
    async with FakeOpenAI(script) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "plan Beijing", user="ann", is_group=True))
            await surface.wait_for(lambda s: bool(deltas(s)))
            await rt.manager.submit(msg(A, "/stop", user="bob", is_group=True))
            await surface.wait_for(lambda s: bool(notices(s, "info")))
            assert "Only the person who asked" in notices(surface, "info")[0].text
            fake.gate("go").set()
            await surface.wait_count("answer", 1)
            assert surface.of("answer", A)[0].text == LONG and not notices(surface, "cancelled")
        finally:
            await rt.stop()


async def test_a_stop_pressed_for_an_earlier_run_says_so_and_the_run_working_now_goes_on(tmp_path: Path) -> None:
    """A Stop button names its run: one left on an earlier run's progress message (even of an
    earlier conversation, whose run numbers start again at 1) stops nothing; a typed /stop and
    the button of the run working now stop it."""
    surface = RecordingSurface()
    script = [
        reply("<answer>Day 1: the Forbidden City.</answer>"),
        reply(LONG, chunk_chars=6, hold_after=3, hold_gate="go"),
        reply(LONG, chunk_chars=6, hold_after=3, hold_gate="never"),
    ]
    async with FakeOpenAI(script) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "plan Beijing"))
            await surface.wait_count("answer", 1)
            first = surface.runs[-1].run
            await rt.manager.wait_until_idle(A, 5)
            await rt.manager.submit(msg(A, "/stop", run=first))  # after its run ended: nothing changes
            await surface.wait_for(lambda s: len(notices(s, "info")) == 1)
            assert "already ended" in notices(surface, "info")[0].text

            seen = len(surface.runs)
            await rt.manager.submit(msg(A, "now Shanghai"))
            await surface.wait_for(lambda s: len(s.runs) > seen and LONG[:12] in deltas(s))
            second = surface.runs[-1].run
            assert second and second != first
            await rt.manager.submit(msg(A, "/stop", run=first, dedup="old-button"))
            await surface.wait_for(lambda s: len(notices(s, "info")) == 2)
            assert "already ended" in notices(surface, "info")[1].text
            fake.gate("go").set()
            await surface.wait_count("answer", 2)
            assert surface.of("answer", A)[1].text == LONG and not notices(surface, "cancelled")

            await rt.manager.wait_until_idle(A, 5)
            await rt.manager.submit(msg(A, "/new"))
            seen, written = len(surface.runs), len(deltas(surface))
            await rt.manager.submit(msg(A, "plan Tokyo"))
            await surface.wait_for(lambda s: len(s.runs) > seen and len(deltas(s)) >= written + 12)
            third = surface.runs[-1].run
            assert third not in (first, second)
            await rt.manager.submit(msg(A, "/stop", run=second, dedup="older-button"))
            await surface.wait_for(lambda s: len(notices(s, "info")) == 3)
            assert "already ended" in notices(surface, "info")[2].text and not notices(surface, "cancelled")
            await rt.manager.submit(msg(A, "/stop", run=third, dedup="its-button"))
            await surface.wait_for(lambda s: bool(notices(s, "cancelled")))
            await fake.wait_for(lambda f: disconnected(f.requests[2]))
        finally:
            await rt.stop()


async def test_a_stale_stop_is_said_in_the_persons_language(tmp_path: Path) -> None:
    surface = RecordingSurface()
    async with FakeOpenAI([reply("<answer>第一天：故宫。</answer>")]) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "规划北京之行"))
            await surface.wait_count("answer", 1)
            await rt.manager.wait_until_idle(A, 5)
            await rt.manager.submit(msg(A, "/stop", run="0123456789abcdef0123456789abcdef.7"))
            await surface.wait_for(lambda s: bool(notices(s, "info")))
            assert "已经结束" in notices(surface, "info")[0].text
            fake.assert_complete()
        finally:
            await rt.stop()


async def test_a_stream_broken_by_the_model_ends_the_run_with_a_clear_notice(tmp_path: Path) -> None:
    surface = RecordingSurface()
    async with FakeOpenAI([reply(LONG, chunk_chars=6, cut_after=4), reply("<answer>Again, in full.</answer>")]) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "plan Beijing"))
            await surface.wait_for(lambda s: bool(notices(s, "error")))
            assert "broke off" in notices(surface, "error")[0].text
            assert len(fake.requests) == 1  # not retried after the first chunk
            await rt.manager.wait_until_idle(A, 5)
            await rt.manager.submit(msg(A, "try again"))
            await surface.wait_count("answer", 1)
            fake.assert_complete()
        finally:
            await rt.stop()


async def test_one_reminder_per_question_across_restarts(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, remind_after_s=0.3, human_timeout_s=3600)
    script = [reply(tool_calls=[call("ask_human", {"inquire": "Which day do you leave?"}, id="call_ask")])]
    surfaces = [RecordingSurface(), RecordingSurface(), RecordingSurface()]
    async with FakeOpenAI(script) as fake:
        rt = await start_runtime(settings, make_llm(fake.base_url), surfaces[0])
        try:
            await rt.manager.submit(msg(A, "plan a trip"))
            await surfaces[0].wait_count("question", 1)
            await rt.manager.wait_until_idle(A, 5)
        finally:
            await rt.stop()
        store = SqliteStore(settings.db_path)
        await store.open()
        try:
            [waiting] = await store.waiting_questions()
        finally:
            await store.close()
        if waiting.remind_at is not None:  # due while no process runs
            await asyncio.sleep(max(0.0, waiting.remind_at - time.time()) + 0.01)
        for surface in surfaces[1:]:
            rt = await start_runtime(settings, make_llm(fake.base_url), surface)
            try:
                await rt.manager.deadlines.check_now()
                if surface is surfaces[1] and not notices(surfaces[0], "reminder"):
                    await surface.wait_for(lambda s: bool(notices(s, "reminder")))
                await rt.manager.wait_until_idle(A, 5)
            finally:
                await rt.stop()
        reminders = [n for s in surfaces for n in notices(s, "reminder")]
        assert len(reminders) == 1
        assert "Which day do you leave?" in reminders[0].text and reminders[0].reply_to == "q1"
        fake.assert_complete()
