"""Cost per chat: the price table, tokens and cost per run and per chat in the store, what
/status tells the person, and the cost totals /metrics exports."""

from __future__ import annotations

import re

from bot.observe.model_prices import PriceTable
from bot.surface import ChatKey
from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.spine_support import RecordingSurface, make_llm, make_settings, msg, start_runtime

A = ChatKey("test", "cost-a")


def test_prices_by_model_with_dated_names_and_overrides():
    table = PriceTable({"my-local-model": (1.0, 2.0), "gpt-4o-mini": (0.3, 1.2)})
    assert table.cost("my-local-model", 1_000_000, 500_000) == 2.0
    assert table.cost("gpt-4o-mini-2024-07-18", 1_000_000, 0) == 0.3  # the override, by its prefix
    assert table.cost("gpt-4o-2024-08-06", 1_000_000, 1_000_000) == 12.5  # gpt-4o, not gpt-4o-mini
    assert table.cost("deepseek-chat", 0, 1_000_000) == 1.1
    assert table.cost("unheard-of", 1000, 1000) == 0.0


async def test_a_trip_across_a_question_is_one_run_with_its_tokens_and_cost(tmp_path):
    surface = RecordingSurface()
    script = [
        reply(tool_calls=[call("ask_human", {"inquire": "Which date?"}, id="q1")], usage=(1000, 100)),
        reply(tool_calls=[call("lookup", {"city": "Hangzhou"})], usage=(2000, 200)),
        reply("Go on the 5th.", usage=(3000, 300)),
    ]
    settings = make_settings(tmp_path, llm_prices={"gpt-4o-mini": (10.0, 100.0)})
    async with FakeOpenAI(script) as fake:
        rt = await start_runtime(settings, make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "plan a trip to Hangzhou"))
            await surface.wait_count("question", 1)
            await rt.manager.wait_until_idle(A, 5)
            await rt.manager.submit(msg(A, "/status"))
            await surface.wait_for(lambda s: any(n.kind == "status" for n in s.of("notice")))
            status = next(n.text for n in surface.of("notice") if n.kind == "status")
            # 1000 in at $10/M + 100 out at $100/M
            assert "1 model calls, 1000 tokens in / 100 out, about $0.0200" in status
            await rt.manager.submit(msg(A, "the 5th"))
            await surface.wait_count("answer", 1)
            await rt.manager.wait_until_idle(A, 5)
            session = await rt.store.get_session(str(A))
            assert session is not None
            assert (session.prompt_tokens, session.completion_tokens, session.llm_calls) == (6000, 600, 3)
            assert abs(session.cost_usd - 0.12) < 1e-9
            [run] = await rt.store.recent_runs()
            assert (run.session_id, run.run_no, run.chat_key, run.model) == (session.id, 1, str(A), "gpt-4o-mini")
            assert (run.segments, run.steps, run.llm_calls, run.outcome) == (2, 3, 3, "answered")
            assert abs(run.cost_usd - 0.12) < 1e-9
            await rt.metrics.refresh()
            text = rt.metrics.render().decode()
            cost = re.search(r'bot_llm_cost_usd_total\{model="gpt-4o-mini",platform="test"\} (\S+)', text)
            assert cost is not None and abs(float(cost.group(1)) - 0.12) < 1e-9
            assert 'bot_chat_llm_tokens_total{kind="prompt",model="gpt-4o-mini",platform="test"} 6000.0' in text
            fake.assert_complete()
        finally:
            await rt.stop()
