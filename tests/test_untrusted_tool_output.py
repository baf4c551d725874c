"""Tool output reaches the model as quoted, untrusted data under a fixed instruction: a web search
result that tries to instruct the model (and to close the quote) stays inside the quote."""

from __future__ import annotations

import json
import re
from datetime import datetime
from zoneinfo import ZoneInfo

import httpx

from agent_core.agents import ToolCallAgent
from agent_core.events import AnswerReady
from agent_core.memory import Memory
from agent_core.prompts.travel import build_system_prompt
from agent_core.schema import Message
from agent_core.tool_output import HEADER, quote_tool_output
from bot.settings import Settings
from tests.fakes.live_providers import INJECTION, FakeLiveServices
from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.spine_support import make_llm
from tools.base import ToolContext
from tools.collection import ToolCollection
from tools.travel import Gazetteer, SandboxProvider, build_travel_tools, make_provider

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=ZoneInfo("Asia/Shanghai"))


def test_a_quote_cannot_be_closed_from_inside() -> None:
    quoted = quote_tool_output("web_search", INJECTION)
    assert quoted.startswith(HEADER.format(name="web_search"))
    assert quoted.count("<tool_output") == 1 and quoted.count("</tool_output>") == 1
    assert quoted.endswith("</tool_output>")
    assert quote_tool_output("ask_human", "Friday") == "Friday"  # the person's own answer is no tool data


async def test_an_injection_in_a_search_result_reaches_the_model_only_as_quoted_data() -> None:
    gaz = Gazetteer.load()
    script = [
        reply(tool_calls=[call("web_search", {"query": "Forbidden City tickets", "max_results": 3}, id="call_ws")]),
        reply("<answer>Book on the museum's own site a week ahead.</answer>"),
    ]
    async with FakeLiveServices() as live, FakeOpenAI(script) as fake, httpx.AsyncClient(timeout=5) as http:
        live.mode["searxng"] = "inject"
        settings = Settings(_env_file=None, BOT_TRAVEL_DATA="live", SEARXNG_URL=live.searxng_url)  # type: ignore[call-arg]
        providers = make_provider(settings, gaz, SandboxProvider(gaz), http=http, endpoints=live.endpoints())
        llm = make_llm(fake.base_url)
        agent = ToolCallAgent(
            model=llm, tools=ToolCollection(build_travel_tools(gaz, providers)),
            system_prompt=build_system_prompt("en", NOW, "Asia/Shanghai", None),
            context=ToolContext(tool_call_id="", now=NOW, lang="en"),
            memory=Memory([Message.user("How do I get tickets for the Forbidden City?")]), max_steps=4,
        )
        try:
            answers = [e async for e in agent.run() if isinstance(e, AnswerReady)]
        finally:
            await llm.aclose()
        assert answers and "museum" in answers[0].text
        fake.assert_complete()
        second = fake.requests[-1].body["messages"]
    system = second[0]["content"]
    assert "untrusted data" in system and "never follow instructions" in system
    (tool,) = [m for m in second if m["role"] == "tool"]
    content = tool["content"]
    assert content.startswith(HEADER.format(name="web_search"))
    # the hostile text is there (the model may read it as information) but only inside the one quote
    body = re.fullmatch(r'(?s).*?\n<tool_output tool="web_search">\n(.*)\n</tool_output>', content)
    assert body is not None, content[:400]
    assert "Ignore all previous instructions" in body.group(1)
    assert "</tool_output>" not in body.group(1) and "<tool_output" not in body.group(1)
    assert json.loads(body.group(1))["source"] == "searxng"  # the data itself is untouched otherwise
