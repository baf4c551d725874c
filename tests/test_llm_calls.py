"""The LLM client against the fake server through the real openai client: turns, usage, formatting."""

from __future__ import annotations

import asyncio
import base64
import struct
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

import pytest

from agent_core.errors import TokenLimitExceeded
from agent_core.llm import LLM
from agent_core.llm_config import LLMConfig, known_context_window
from agent_core.model import TokenUsage
from agent_core.schema import Function, Message, Role, ToolCall
from agent_core.tool_output import quote_tool_output
from tests.fakes.openai_server import FakeOpenAI, call, reply

WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
TERMINATE_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {"name": "terminate", "parameters": {"type": "object", "properties": {"status": {"type": "string"}}}},
}


@pytest.fixture
def make_llm(closing: AsyncExitStack) -> Callable[..., LLM]:
    """Builds LLMs against a fake; each is closed (its connections with it) after the test."""
    def make(fake: FakeOpenAI, model: str = "test-model", **overrides: Any) -> LLM:
        config = LLMConfig(model=model, api_key="sk-test", base_url=fake.base_url, timeout_s=5,
                           backoff_base_s=0.01, backoff_cap_s=0.05, **overrides)
        llm = LLM(config)
        closing.push_async_callback(llm.aclose)
        return llm

    return make


def png(width: int, height: int) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">II", width, height) + b"\x08\x02\x00\x00\x00"


async def test_native_tool_call_round_trip(make_llm: Callable[..., LLM]) -> None:
    script = [reply("Let me check.", tool_calls=[call("get_weather", {"city": "北京"}, id="call_w1")]), reply("Sunny.")]
    async with FakeOpenAI(script) as fake:
        llm = make_llm(fake)
        history = [Message.system("You plan trips."), Message.user("Weather in Beijing?")]
        turn = await llm.ask_tool(history, tools=[WEATHER_TOOL], tool_choice="auto")
        assert turn.tool_calls is not None and turn.tool_calls[0].id == "call_w1"
        assert turn.tool_calls[0].function.name == "get_weather"
        assert turn.tool_calls[0].parsed_arguments() == {"city": "北京"}
        assert turn.content == "Let me check."
        history += [turn, Message.tool("晴, 25°C", tool_call_id="call_w1", name="get_weather")]
        final = await llm.ask_tool(history, tools=[WEATHER_TOOL])
        assert final.content == "Sunny." and final.tool_calls is None
        first, second = fake.requests
        assert first.body["tool_choice"] == "auto" and first.tool_names() == ["get_weather"]
        assert second.tool_results() == {"call_w1": quote_tool_output("get_weather", "晴, 25°C")}  # quoted, untrusted
        assert second.messages[2]["tool_calls"][0]["id"] == "call_w1"
        fake.assert_complete()


async def test_usage_is_counted_per_session_object(make_llm: Callable[..., LLM]) -> None:
    async with FakeOpenAI(scripts={
        "a": [reply("A1", usage=(100, 10)), reply("A2", usage=(120, 12))],
        "b": [reply("B1", usage=(7, 3))],
    }) as fake:
        llm = make_llm(fake)
        ua, ub = TokenUsage(), TokenUsage()
        await asyncio.gather(
            llm.ask([Message.user("[conv:a] hi")], usage=ua),
            llm.ask([Message.user("[conv:b] hi")], usage=ub),
        )
        await llm.ask([Message.user("[conv:a] again")], usage=ua)
        assert (ua.prompt_tokens, ua.completion_tokens, ua.calls) == (220, 22, 2)
        assert (ub.prompt_tokens, ub.completion_tokens, ub.calls) == (7, 3, 1)
        assert ua.by_call == [(100, 10), (120, 12)]
        assert not hasattr(llm, "total_tokens")  # the client keeps no totals of its own
        fake.assert_complete()


@pytest.mark.parametrize(
    "content",
    [
        'I will look it up.\n```json\n{"name": "get_weather", "arguments": {"city": "上海"}}\n```',
        'I will look it up. <tool_call>{"tool": "get_weather", "parameters": {"city": "上海"}}</tool_call>',
        'I will look it up.\n<TOOL_BEGIN>\n<tool_call>get_weather(city="上海")</tool_call>\n<TOOL_END>',
    ],
    ids=["json-fence", "tagged-json", "tagged-call-syntax"],
)
async def test_tool_calls_written_as_text_are_recovered(content: str, make_llm: Callable[..., LLM]) -> None:
    async with FakeOpenAI([reply(content)]) as fake:
        turn = await make_llm(fake).ask_tool([Message.user("weather?")], tools=[WEATHER_TOOL])
        assert turn.tool_calls is not None and len(turn.tool_calls) == 1
        tc = turn.tool_calls[0]
        assert tc.function.name == "get_weather" and tc.parsed_arguments() == {"city": "上海"}
        assert tc.id.startswith("call_") and len(tc.id) > 10
        assert turn.content == "I will look it up."


async def test_text_calls_to_tools_not_offered_stay_text(make_llm: Callable[..., LLM]) -> None:
    text = '```json\n{"name": "rm_rf", "arguments": {}}\n```'
    offered = '```json\n{"name": "get_weather", "arguments": {"city": "x"}}\n```'
    async with FakeOpenAI([reply(text), reply(offered)]) as fake:
        llm = make_llm(fake)
        turn = await llm.ask_tool([Message.user("x")], tools=[WEATHER_TOOL])
        assert turn.tool_calls is None and turn.content == text
        # with tool_choice="none" nothing is recovered, even for an offered tool
        none_turn = await llm.ask_tool([Message.user("x")], tools=[WEATHER_TOOL], tool_choice="none")
        assert none_turn.tool_calls is None and "get_weather" in (none_turn.content or "")


async def test_think_blocks_are_stripped(make_llm: Callable[..., LLM]) -> None:
    async with FakeOpenAI([
        reply("<think>the user wants sun</think>\nHere is your plan."),
        reply("long reasoning without an opening tag</think>\n\nFinal answer."),
        reply("<think>secret</think>", tool_calls=[call("terminate", {"status": "success"})]),
    ]) as fake:
        llm = make_llm(fake)
        assert await llm.ask([Message.user("go")]) == "Here is your plan."
        assert await llm.ask([Message.user("go")]) == "Final answer."
        turn = await llm.ask_tool([Message.user("go")], tools=[TERMINATE_TOOL])
        assert turn.content is None and turn.tool_calls is not None


async def test_context_check_raises_before_any_request(make_llm: Callable[..., LLM]) -> None:
    async with FakeOpenAI([reply("never")]) as fake:
        llm = make_llm(fake, context_tokens=300, max_tokens=100)
        usage = TokenUsage()
        with pytest.raises(TokenLimitExceeded) as info:
            await llm.ask([Message.user("word " * 400)], usage=usage)
        assert info.value.limit == 200 and info.value.needed > 400
        assert fake.requests == [] and usage.errors == 1 and usage.calls == 0
        assert await llm.ask([Message.user("short")]) == "never"  # a small request still fits


def test_known_models_use_their_window_others_the_config() -> None:
    assert known_context_window("gpt-4o-mini") == 128_000
    assert known_context_window("deepseek/deepseek-chat") == 128_000
    assert LLMConfig(model="gpt-4", api_key="k", context_tokens=999).context_window == 8_192
    assert LLMConfig(model="my-local-qwen", api_key="k", context_tokens=32_768).context_window == 32_768


async def test_images_sent_to_vision_models_and_dropped_for_others(make_llm: Callable[..., LLM]) -> None:
    image = base64.b64encode(png(640, 480)).decode()
    async with FakeOpenAI([reply("a cat"), reply("no eyes"), reply("two cats")]) as fake:
        vision = make_llm(fake, model="gpt-4o")
        blind = make_llm(fake, model="text-only-7b")
        assert vision.vision and not blind.vision
        msgs = [Message.user("what is this?", base64_image=image)]
        assert await vision.ask(msgs) == "a cat"
        assert await blind.ask(msgs) == "no eyes"
        assert await vision.ask_with_images([Message.user("and these?")], [png(10, 10), image]) == "two cats"
        sent_vision = fake.requests[0].messages[0]["content"]
        assert sent_vision[0] == {"type": "text", "text": "what is this?"}
        assert sent_vision[1]["image_url"]["url"] == f"data:image/png;base64,{image}"
        sent_blind = fake.requests[1].messages[0]["content"]
        assert isinstance(sent_blind, str) and "what is this?" in sent_blind and "image" in sent_blind
        parts = fake.requests[2].messages[0]["content"]
        assert [p["type"] for p in parts] == ["text", "image_url", "image_url"]


async def test_image_on_a_tool_result_goes_in_a_user_turn_after_the_tool_run(make_llm: Callable[..., LLM]) -> None:
    image = base64.b64encode(png(64, 64)).decode()
    history = [
        Message.user("screenshot both"),
        Message.assistant(None, [ToolCall(id=i, function=Function(name="shot")) for i in ("a", "b")]),
        Message(role=Role.TOOL, content="shot a", tool_call_id="a", name="shot", base64_image=image),
        Message.tool("shot b", tool_call_id="b", name="shot"),
    ]
    async with FakeOpenAI([reply("seen")]) as fake:
        assert await make_llm(fake, model="gpt-4o").ask(history) == "seen"
        roles = [m["role"] for m in fake.requests[0].messages]
        assert roles == ["user", "assistant", "tool", "tool", "user"]
        assert fake.requests[0].messages[-1]["content"][1]["type"] == "image_url"

