"""The runtime end to end in one process: pause/answer/resume, queueing, dedup, commands, bad input."""

from __future__ import annotations

import asyncio

import pytest

from adapters.runtime import Runtime
from agent_core.events import AnswerReady, QuestionAsked
from bot.run.records import PendingQuestion
from bot.surface import ChatKey, SubmitOutcome
from tests.fakes.openai_server import FakeOpenAI, Turn, call, fault, reply
from tests.spine_support import (
    LookupParams,
    RecordingSurface,
    make_llm,
    make_settings,
    make_tools,
    msg,
    start_runtime,
)
from tools.base import BaseTool, ToolContext, ToolResult
from tools.collection import ToolCollection

A = ChatKey("test", "a")
B = ChatKey("test", "b")


async def posted_question(rt: Runtime, chat: ChatKey) -> PendingQuestion:
    """The message id is recorded right after the surface returns it."""
    async with asyncio.timeout(5):
        while (pending := await rt.manager.pending_question(chat)) is None or pending.posted_message_id is None:
            await asyncio.sleep(0.01)
    return pending


async def test_pause_answer_resume_uses_the_real_tool_call_id(tmp_path):
    script = [
        reply(tool_calls=[call("ask_human", {"inquire": "Which day do you leave?"}, id="call_ask_1")]),
        reply(tool_calls=[call("lookup", {"city": "Shanghai"}, id="call_look_1")]),
        reply("<answer>Leave Friday; Shanghai is sunny.</answer>"),
    ]
    surface = RecordingSurface()
    async with FakeOpenAI(script) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            assert await rt.manager.submit(msg(A, "Plan a trip to Shanghai", dedup="1")) is SubmitOutcome.ACCEPTED
            await surface.wait_count("question", 1)
            q = surface.of("question")[0]
            assert isinstance(q, QuestionAsked) and q.question == "Which day do you leave?"
            assert q.tool_call_id == "call_ask_1"
            pending = await posted_question(rt, A)
            assert pending.tool_call_id == "call_ask_1" and pending.posted_message_id == "q1"
            await rt.manager.submit(msg(A, "Friday", dedup="2"))
            await surface.wait_count("answer", 1)
            answer = surface.of("answer")[0]
            assert isinstance(answer, AnswerReady) and answer.text == "Leave Friday; Shanghai is sunny."
            fake.assert_complete()
            second = fake.requests[1]
            assert second.tool_results() == {"call_ask_1": "Friday"}
            assert await rt.manager.pending_question(A) is None
            history = [(h.role, h.text) for h in await rt.manager.history(A)]
            assert history == [
                ("user", "Plan a trip to Shanghai"), ("question", "Which day do you leave?"),
                ("answer", "Friday"), ("assistant", "Leave Friday; Shanghai is sunny."),
            ]
        finally:
            await rt.stop()


async def test_two_chats_at_once_do_not_cross_talk(tmp_path):
    scripts = {
        "a": [reply(tool_calls=[call("ask_human", {"inquire": "A: when?"})], latency_ms=50), reply("A done")],
        "b": [reply(tool_calls=[call("ask_human", {"inquire": "B: when?"})]), reply("B done")],
    }
    surface = RecordingSurface()
    async with FakeOpenAI(scripts=scripts) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "[conv:a] trip A"))
            await rt.manager.submit(msg(B, "[conv:b] trip B"))
            await surface.wait_count("question", 1, A)
            await surface.wait_count("question", 1, B)
            await rt.manager.submit(msg(B, "answer-b"))
            await rt.manager.submit(msg(A, "answer-a"))
            await surface.wait_count("answer", 1, A)
            await surface.wait_count("answer", 1, B)
            assert surface.of("answer", A)[0].text == "A done"
            assert surface.of("answer", B)[0].text == "B done"
            for req in fake.requests:
                if req.key == "a":
                    assert "answer-b" not in str(req.messages)
            fake.assert_complete()
        finally:
            await rt.stop()


async def test_message_during_a_run_steers_it_at_its_next_step(tmp_path):
    surface = RecordingSurface()
    async with FakeOpenAI() as fake:
        gate = fake.gate("slow")
        fake.add(reply(tool_calls=[call("lookup", {"city": "Xi'an"})], gate=gate), reply("done, by train"))
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "first request"))
            await fake.wait_for_requests(1)
            assert await rt.manager.submit(msg(A, "also, I prefer trains")) is SubmitOutcome.ACCEPTED
            await surface.wait_for(lambda s: any(n.kind == "queued" for n in s.of("notice")))  # told it was taken in
            gate.set()
            await surface.wait_count("answer", 1)
            await rt.manager.wait_until_idle(A, 5)
            assert [a.text for a in surface.of("answer")] == ["done, by train"]
            last = fake.requests[-1].messages
            roles = [m["role"] for m in last]
            assert roles[-3:] == ["assistant", "tool", "user"]  # after the step's result, before the next call
            user_texts = [m["content"] for m in last if m["role"] == "user"]
            assert user_texts == ["first request", "also, I prefer trains"]
            fake.assert_complete()
            history = [(h.role, h.text) for h in await rt.manager.history(A)]
            assert ("user", "also, I prefer trains") in history
        finally:
            await rt.stop()


async def test_duplicate_inbox_ids_are_ignored(tmp_path):
    surface = RecordingSurface()
    async with FakeOpenAI([reply("only once")]) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            assert await rt.manager.submit(msg(A, "hello", dedup="42")) is SubmitOutcome.ACCEPTED
            assert await rt.manager.submit(msg(A, "hello", dedup="42")) is SubmitOutcome.DUPLICATE
            await surface.wait_count("answer", 1)
            await rt.manager.wait_until_idle(A, 5)
            assert len(surface.of("answer")) == 1
            assert len(fake.requests) == 1
        finally:
            await rt.stop()


async def test_cancel_while_waiting_then_a_new_request_is_valid_for_the_api(tmp_path):
    surface = RecordingSurface()
    script = [
        reply(tool_calls=[call("ask_human", {"inquire": "When?"}), call("lookup", {"city": "Harbin"})]),
        reply("fresh answer"),
    ]
    async with FakeOpenAI(script) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "trip to Harbin"))
            await surface.wait_count("question", 1)
            await rt.manager.submit(msg(A, "/cancel"))
            await surface.wait_for(lambda s: any(n.kind == "cancelled" for n in s.of("notice")))
            info = await rt.manager.session_info(A)
            assert info is not None and info.state == "idle"
            await rt.manager.submit(msg(A, "something else"))
            await surface.wait_count("answer", 1)
            assert surface.of("answer")[0].text == "fresh answer"
            # the strict fake would have answered 400 had the cancelled call been left unanswered
            assert fake.requests[-1].status == 200
            fake.assert_complete()
        finally:
            await rt.stop()


class SlowForecast(BaseTool[LookupParams]):
    """A read-only tool (its reply is written while it runs) that waits until the test lets it go."""

    name = "forecast"
    description = "Forecast the weather of a city."
    params_model = LookupParams
    read_only = True

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    async def execute(self, params: LookupParams, ctx: ToolContext) -> ToolResult:
        self.started.set()
        await self.release.wait()
        return ToolResult(output="rain", summary="rain")


async def test_cancel_while_a_read_only_tool_runs_leaves_a_history_valid_for_the_api(tmp_path):
    surface = RecordingSurface()
    forecast = SlowForecast()
    script = [reply(tool_calls=[call("forecast", {"city": "Harbin"}, id="call_f")]), reply("fresh answer")]
    async with FakeOpenAI(script) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface,
                                 tools=ToolCollection([*make_tools(), forecast]))
        try:
            await rt.manager.submit(msg(A, "trip to Harbin"))
            async with asyncio.timeout(5):
                await forecast.started.wait()
            await rt.manager.submit(msg(A, "/cancel"))
            await surface.wait_for(lambda s: any(n.kind == "cancelled" for n in s.of("notice")))
            # the reply was written while its tool ran; the cancel found it and answered its call
            history = await rt.store.load_messages((await rt.store.get_session(str(A))).id)
            calls = [tc.id for m in history for tc in (m.tool_calls or ())]
            results = [m.tool_call_id for m in history if m.tool_call_id]
            assert calls == ["call_f"] and results == ["call_f"]
            await rt.manager.submit(msg(A, "something else"))
            await surface.wait_count("answer", 1)
            assert fake.requests[-1].status == 200  # the strict fake refuses an unanswered call
            fake.assert_complete()
        finally:
            forecast.release.set()
            await rt.stop()


async def test_new_starts_a_fresh_conversation(tmp_path):
    surface = RecordingSurface()
    async with FakeOpenAI([reply("one"), reply("two")]) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "first"))
            await surface.wait_count("answer", 1)
            first = await rt.manager.session_info(A)
            await rt.manager.submit(msg(A, "/new"))
            await surface.wait_for(lambda s: any(n.kind == "new" for n in s.of("notice")))
            await rt.manager.submit(msg(A, "second"))
            await surface.wait_count("answer", 2)
            second = await rt.manager.session_info(A)
            assert first is not None and second is not None and first.session_id != second.session_id
            user_texts = [m["content"] for m in fake.requests[-1].messages if m["role"] == "user"]
            assert user_texts == ["second"]
        finally:
            await rt.stop()


async def test_status_and_help(tmp_path):
    surface = RecordingSurface()
    async with FakeOpenAI([reply(tool_calls=[call("ask_human", {"inquire": "Budget?"})])]) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "/help"))
            await rt.manager.submit(msg(A, "trip please"))
            await surface.wait_count("question", 1)
            await rt.manager.submit(msg(A, "/status"))
            await surface.wait_for(lambda s: any(n.kind == "status" for n in s.of("notice")))
            notices = {n.kind: n.text for n in surface.of("notice")}
            assert "/new" in notices["help"]
            assert "Budget?" in notices["status"]
        finally:
            await rt.stop()


@pytest.mark.parametrize("text", ["", "   \n\t ", "x" * 100_000])
async def test_empty_and_huge_messages_get_a_clear_answer(tmp_path, text):
    surface = RecordingSurface()
    async with FakeOpenAI([reply("still works")]) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            assert await rt.manager.submit(msg(A, text)) is SubmitOutcome.INVALID
            notice = surface.of("notice")[0]
            assert notice.kind == "invalid"
            if text.strip():  # "xxx…" is no language either: the default, Chinese
                assert "太长" in notice.text and "100000" in notice.text
            else:
                assert "空" in notice.text  # no language to go by: the default, Chinese
            await rt.manager.submit(msg(A, "a real request"))
            await surface.wait_count("answer", 1)
            assert len(fake.requests) == 1
        finally:
            await rt.stop()


async def test_model_endpoint_down_then_back(tmp_path):
    surface = RecordingSurface()
    script: list[Turn] = [fault(503), fault(503), fault(503), reply("back again")]
    async with FakeOpenAI(script) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url, max_retries=2), surface)
        try:
            await rt.manager.submit(msg(A, "plan something"))
            await surface.wait_for(lambda s: any(n.kind == "error" for n in s.of("notice")))
            err = next(n for n in surface.of("notice") if n.kind == "error")
            assert "not reachable" in err.text and "kept" in err.text
            await rt.manager.submit(msg(A, "plan something"))
            await surface.wait_count("answer", 1)
            assert surface.of("answer")[0].text == "back again"
            fake.assert_complete()
        finally:
            await rt.stop()


async def test_a_model_repeating_the_same_call_is_stopped(tmp_path):
    surface = RecordingSurface()
    loop: list[Turn] = [reply(tool_calls=[call("lookup", {"city": "Lhasa"})]) for _ in range(3)]
    async with FakeOpenAI([*loop, reply("recovered")]) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "weather loop"))
            await surface.wait_for(lambda s: any(n.kind == "error" for n in s.of("notice")))
            assert "repeating" in next(n for n in surface.of("notice") if n.kind == "error").text
            await rt.manager.submit(msg(A, "try again"))
            await surface.wait_count("answer", 1)
            fake.assert_complete()
        finally:
            await rt.stop()


async def test_bad_tool_arguments_become_an_observation(tmp_path):
    surface = RecordingSurface()
    script = [
        reply(tool_calls=[call("lookup", "{not json", id="c1")]),
        reply(tool_calls=[call("lookup", {"town": "x"}, id="c2")]),
        reply("fixed"),
    ]
    async with FakeOpenAI(script) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "weather"))
            await surface.wait_count("answer", 1)
            results = fake.requests[1].tool_results()
            # quoted as tool output (agent_core/tool_output.py), the observation itself starts with Error:
            assert '<tool_output tool="lookup">\nError:' in results["c1"] and "not valid JSON" in results["c1"]
            results = fake.requests[2].tool_results()
            assert "city: required field is missing" in results["c2"]
        finally:
            await rt.stop()


async def test_a_reply_with_neither_content_nor_tool_calls(tmp_path):
    surface = RecordingSurface()
    async with FakeOpenAI([reply(""), reply("")]) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "hm"))
            await surface.wait_count("answer", 1)
            assert "rephrase" in surface.of("answer")[0].text
            fake.assert_complete()
        finally:
            await rt.stop()


async def test_parked_session_is_redriven_from_the_store(tmp_path):
    surface = RecordingSurface()
    script = [reply(tool_calls=[call("ask_human", {"inquire": "How many nights?"}, id="ask9")]), reply("3 nights booked")]
    async with FakeOpenAI(script) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "hotel please"))
            await surface.wait_count("question", 1)
            async with asyncio.timeout(5):  # nothing is held in memory for a parked session
                while (info := await rt.manager.session_info(A)) is None or info.state != "parked" or (
                    rt.manager.chats.actor(str(A)) is not None
                ):
                    await asyncio.sleep(0.01)
            await rt.manager.submit(msg(A, "3"))
            await surface.wait_count("answer", 1)
            assert fake.requests[1].tool_results() == {"ask9": "3"}
        finally:
            await rt.stop()


async def test_a_question_deadline_expires(tmp_path):
    surface = RecordingSurface()
    script = [reply(tool_calls=[call("ask_human", {"inquire": "Budget?"}, id="askb")]), reply("Assumed a mid budget.")]
    async with FakeOpenAI(script) as fake:
        rt = await start_runtime(make_settings(tmp_path, human_timeout_s=0.3), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "plan"))
            await surface.wait_count("answer", 1)
            assert "did not answer" in fake.requests[1].tool_results()["askb"]
        finally:
            await rt.stop()


async def test_question_posting_is_retried(tmp_path):
    surface = RecordingSurface(fail_questions=1)
    async with FakeOpenAI([reply(tool_calls=[call("ask_human", {"inquire": "Date?"})])]) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "plan"))
            await surface.wait_count("question", 1)
            pending = await posted_question(rt, A)
            assert pending.posted_message_id == "q1"
        finally:
            await rt.stop()


async def test_group_chat_answers_only_from_the_asker_others_suggest(tmp_path):
    surface = RecordingSurface()
    script = [reply(tool_calls=[call("ask_human", {"inquire": "Which date?"}, id="g1")]), reply("ok")]
    async with FakeOpenAI(script) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "trip for us", user="alice", is_group=True))
            await surface.wait_count("question", 1)
            await rt.manager.wait_until_idle(A, 5)
            await rt.manager.submit(msg(A, "I want pizza", user="bob", is_group=True))
            await rt.manager.submit(msg(A, "Dec 5", user="alice", is_group=True))
            await surface.wait_count("answer", 1)
            assert fake.requests[1].tool_results() == {"g1": "alice: Dec 5"}  # the model reads who answered
            user_texts = [m["content"] for m in fake.requests[1].messages if m["role"] == "user"]
            assert user_texts[-1] == "alice: trip for us"  # bob's words never reached the run...
            [kept] = [n for n in surface.of("notice", A) if n.suggestion_id]  # ...they wait for alice's yes
            assert "“I want pizza”" in kept.text and "bob is not part of this trip's conversation yet" in kept.text
            fake.assert_complete()
        finally:
            await rt.stop()


async def test_token_usage_is_counted_per_session(tmp_path):
    surface = RecordingSurface()
    scripts = {
        "a": [reply(tool_calls=[call("lookup", {"city": "Hangzhou"})], usage=(100, 10)), reply("A", usage=(120, 5))],
        "b": [reply("B", usage=(7, 3))],
    }
    async with FakeOpenAI(scripts=scripts) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "[conv:a] weather"))
            await rt.manager.submit(msg(B, "[conv:b] hello"))
            await surface.wait_count("answer", 1, A)
            await surface.wait_count("answer", 1, B)
            await rt.manager.wait_until_idle(A, 5)
            await rt.manager.wait_until_idle(B, 5)
            a = await rt.store.get_session(str(A))
            b = await rt.store.get_session(str(B))
            assert a is not None and (a.prompt_tokens, a.completion_tokens, a.llm_calls) == (220, 15, 2)
            assert b is not None and (b.prompt_tokens, b.completion_tokens, b.llm_calls) == (7, 3, 1)
        finally:
            await rt.stop()


async def test_an_update_that_keeps_failing_is_set_aside_and_the_chat_goes_on(tmp_path):
    surface = RecordingSurface()
    async with FakeOpenAI([reply("still serving")]) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            # a row no adapter would write: its body is not an IncomingMessage
            assert await rt.store.add_inbox("test", "bad-1", str(A), "{not json") is not None
            await rt.manager.submit(msg(A, "a real request", dedup="good-1"))
            await surface.wait_for(lambda s: any(n.kind == "error" for n in s.of("notice")), timeout=15)
            await surface.wait_count("answer", 1, timeout=15)
            assert surface.of("answer")[0].text == "still serving"
            assert await rt.store.inbox_for(str(A)) == []
        finally:
            await rt.stop()
