"""The LLM client streaming from the fake server (strict SSE chunks) through the real openai client:
tool-call deltas assembled, usage, retries before the first chunk, typed errors after it, and
what the person may see (no think blocks, no tool-call text)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

import pytest

from agent_core.errors import LLMRequestRejected, LLMStreamBroken
from agent_core.llm import LLM
from agent_core.llm_config import LLMConfig
from agent_core.model import StreamingChatModel, TokenUsage
from agent_core.offline.planner import stream_pieces
from agent_core.schema import Message
from agent_core.visible_stream import VisibleStream
from tests.fakes.openai_server import FakeOpenAI, call, fault, reply

WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
}
HISTORY = [Message.system("You plan trips."), Message.user("Weather in Beijing?")]


@pytest.fixture
def make_llm(closing: AsyncExitStack) -> Callable[[FakeOpenAI], LLM]:
    """Builds LLMs against a fake; each is closed (its connections with it) after the test."""
    def make(fake: FakeOpenAI) -> LLM:
        llm = LLM(LLMConfig(model="test-model", api_key="sk-test", base_url=fake.base_url, timeout_s=5,
                            backoff_base_s=0.01, backoff_cap_s=0.05))
        closing.push_async_callback(llm.aclose)
        return llm

    return make


async def collect(llm: LLM, usage: TokenUsage | None = None, tools: list[dict[str, Any]] | None = None
                  ) -> tuple[list[str], Message]:
    pieces: list[str] = []
    turn: Message | None = None
    async for item in llm.stream_tool(HISTORY, tools=tools or [WEATHER_TOOL], usage=usage):
        if isinstance(item, str):
            assert turn is None, "text after the turn"
            pieces.append(item)
        else:
            turn = item
    assert turn is not None
    return pieces, turn


async def test_streamed_text_and_tool_calls_assemble_into_the_same_turn(make_llm: Callable[..., LLM]) -> None:
    args = {"city": "北京", "days": [1, 2, 3], "note": "a long enough argument string to arrive in parts"}
    script = [reply("Let me check the weather first.",
                    tool_calls=[call("get_weather", args, id="call_w1"), call("get_weather", {"city": "上海"}, id="call_w2")],
                    usage=(120, 33), chunk_chars=5)]
    async with FakeOpenAI(script) as fake:
        llm = make_llm(fake)
        assert isinstance(llm, StreamingChatModel)
        usage = TokenUsage()
        pieces, turn = await collect(llm, usage)
        assert len(pieces) > 3 and "".join(pieces) == "Let me check the weather first."
        assert turn.content == "Let me check the weather first."
        assert [tc.id for tc in turn.tool_calls or ()] == ["call_w1", "call_w2"]
        assert turn.tool_calls is not None and turn.tool_calls[0].parsed_arguments() == args
        assert (usage.prompt_tokens, usage.completion_tokens, usage.calls) == (120, 33, 1)
        [req] = fake.requests
        assert req.body["stream"] is True and req.body["stream_options"] == {"include_usage": True}
        fake.assert_complete()


async def test_with_streaming_off_the_turn_is_asked_for_whole() -> None:
    """BOT_LLM_STREAM=false (an endpoint that cannot stream tool calls): one plain request, no
    pieces, the same turn."""
    args = {"city": "北京"}
    script = [reply("Let me check.", tool_calls=[call("get_weather", args, id="call_w1")], usage=(50, 7))]
    async with FakeOpenAI(script) as fake:
        llm = LLM(LLMConfig(model="test-model", api_key="sk-test", base_url=fake.base_url, timeout_s=5, stream=False))
        usage = TokenUsage()
        pieces, turn = await collect(llm, usage)
        assert pieces == []
        assert turn.content == "Let me check."
        assert turn.tool_calls is not None and turn.tool_calls[0].parsed_arguments() == args
        assert (usage.prompt_tokens, usage.completion_tokens, usage.calls) == (50, 7, 1)
        [req] = fake.requests
        assert "stream" not in req.body and "stream_options" not in req.body
        fake.assert_complete()
        await llm.aclose()


async def test_without_a_usage_chunk_the_tokenizer_counts(make_llm: Callable[..., LLM]) -> None:
    async with FakeOpenAI([reply("Sunny and warm.", send_usage=False)]) as fake:
        llm = make_llm(fake)
        usage = TokenUsage()
        pieces, turn = await collect(llm, usage)
        assert "".join(pieces) == turn.content == "Sunny and warm."
        assert usage.calls == 1 and usage.prompt_tokens > 0 and 0 < usage.completion_tokens < 10


async def test_think_blocks_and_tool_call_text_are_never_streamed(make_llm: Callable[..., LLM]) -> None:
    content = ("<think>the user wants weather; I should call the tool</think>Checking now."
               '<tool_call>{"name": "get_weather", "arguments": {"city": "北京"}}</tool_call>')
    async with FakeOpenAI([reply(content, chunk_chars=3)]) as fake:
        llm = make_llm(fake)
        pieces, turn = await collect(llm)
        shown = "".join(pieces)
        assert shown == "Checking now."
        assert turn.tool_calls is not None and turn.tool_calls[0].function.name == "get_weather"


async def test_the_answer_tags_are_dropped_and_the_final_text_equals_the_streamed_text(make_llm: Callable[..., LLM]) -> None:
    async with FakeOpenAI([reply("<answer>Day 1: the Forbidden City.\nDay 2: the Great Wall.</answer>",
                                 chunk_chars=4)]) as fake:
        llm = make_llm(fake)
        pieces, _ = await collect(llm)
        assert "".join(pieces).strip() == "Day 1: the Forbidden City.\nDay 2: the Great Wall."


async def test_faults_before_the_first_chunk_are_retried_as_for_any_call(make_llm: Callable[..., LLM]) -> None:
    async with FakeOpenAI([fault(503), fault(429, retry_after=0), reply("Fine.")]) as fake:
        llm = make_llm(fake)
        pieces, _ = await collect(llm)
        assert "".join(pieces) == "Fine." and len(fake.requests) == 3


async def test_a_refused_request_is_the_usual_typed_error(make_llm: Callable[..., LLM]) -> None:
    async with FakeOpenAI([fault(401)]) as fake:
        llm = make_llm(fake)
        with pytest.raises(LLMRequestRejected):
            await collect(llm)


async def test_a_stream_that_drops_after_its_first_chunks_is_a_typed_error_and_not_retried(make_llm: Callable[..., LLM]) -> None:
    async with FakeOpenAI([reply("A long answer that will never be finished.", chunk_chars=4, cut_after=4),
                           reply("never asked for")]) as fake:
        llm = make_llm(fake)
        shown: list[str] = []
        with pytest.raises(LLMStreamBroken) as caught:
            async for item in llm.stream_tool(HISTORY, tools=[WEATHER_TOOL]):
                if isinstance(item, str):
                    shown.append(item)
        assert "".join(shown) == "A long answer"[: len("".join(shown))] and shown
        assert caught.value.shown_chars == len("".join(shown))
        assert len(fake.requests) == 1 and fake.remaining() == {"": 1}


async def test_garbage_in_the_stream_is_a_typed_error(make_llm: Callable[..., LLM]) -> None:
    async with FakeOpenAI([reply("Some text first.", garbage_after=3), reply("x", garbage_after=0)]) as fake:
        llm = make_llm(fake)
        with pytest.raises(LLMStreamBroken, match="broke off"):
            await collect(llm)
        with pytest.raises(LLMStreamBroken, match="first chunk"):
            await collect(llm)
        fake.assert_complete()


async def test_a_reply_cut_by_the_length_limit_inside_a_tool_call_runs_no_tool(make_llm: Callable[..., LLM]) -> None:
    cut = reply(tool_calls=[call("get_weather", '{"city": "北', id="call_cut")])
    cut.finish_reason = "length"
    async with FakeOpenAI([cut]) as fake:
        llm = make_llm(fake)
        with pytest.raises(LLMStreamBroken, match="middle of the call to get_weather"):
            await collect(llm)


def test_markers_split_across_chunks_are_held_until_they_are_known() -> None:
    stream = VisibleStream()
    out = [stream.feed(p) for p in ["Hello <", "thi", "nk>secret</th", "ink> world <", "b>bold</b> ", "``", "`json {}"]]
    assert "".join(out) == "Hello  world <b>bold</b> "
    assert "secret" not in "".join(out)


def test_the_offline_planner_cuts_its_text_into_a_few_pieces() -> None:
    text = "第一天：故宫。\n第二天：长城。\n第三天：颐和园。\n第四天：返程。"
    pieces = stream_pieces(text)
    assert "".join(pieces) == text and 2 <= len(pieces) <= 5
    assert stream_pieces("") == []
