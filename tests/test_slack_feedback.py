"""👍 / 👎 under every plan on Slack: Slack's feedback_buttons, each press stored with its run
(one rating per person, the latest), counted in /metrics, listed in /admin; junk and a run the
chat does not have are refused and counted. On SQLite and on PostgreSQL."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.surface import ChatKey
from tests.fakes.slack_api import SlackMessage
from tests.pg_support import fresh_database
from tests.scripted_trip import DAYS
from tests.slack_support import SlackStack, slack_stack

TOKEN = "admin-token-for-the-feedback-tests"


@contextlib.asynccontextmanager
async def database(kind: str) -> AsyncIterator[dict[str, Any]]:
    if kind == "sqlite":
        yield {}
        return
    async with fresh_database() as url:
        yield {"BOT_DB_URL": url}


def feedback_values(plan: SlackMessage) -> list[str]:
    return [side["value"] for b in plan.blocks if b["type"] == "context_actions" for el in b["elements"]
            for side in (el["positive_button"], el["negative_button"])]


async def planned(s: SlackStack, user: str = "U1") -> tuple[SlackMessage, SlackMessage]:
    msg = s.mention(user=user, text="plan a trip from Beijing to Shanghai")
    await s.events.app_mention(msg)
    question = await s.wait_question("C1", msg.ts)
    await s.events.block_action(question, user=user, value=DAYS[0])
    return msg, await s.wait_plan("C1", msg.ts)


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_a_press_under_the_plan_is_kept_with_its_run_counted_and_listed(tmp_path: Path, kind: str) -> None:
    async with database(kind) as db, slack_stack(tmp_path, BOT_ADMIN_TOKEN=TOKEN, **db) as s:
        s.fake.members["C1"] = ["UBOT", "U1", "U2", "U3"]  # who sees the channel (and may be told something alone)
        msg, plan = await planned(s)
        info = await s.runtime.manager.session_info(ChatKey("slack", "C1", msg.ts))
        assert info is not None
        run = f"{info.session_id}.1"
        assert feedback_values(plan) == [f"up:{run}", f"down:{run}"]  # the last block of the plan's message
        assert plan.blocks[-1]["type"] == "context_actions"

        await s.events.block_action(plan, user="U1", value=f"up:{run}")
        await s.events.block_action(plan, user="U2", value=f"up:{run}")
        await s.events.block_action(plan, user="U1", value=f"down:{run}")  # changed their mind
        await s.adapter.wait_inbound(lambda c: c["feedback"] == 3, within=5)
        kept = await s.runtime.store.recent_feedback()
        assert sorted((f.user_id, f.rating, f.run_no, f.chat_key) for f in kept) == [
            ("U1", "down", 1, f"slack:C1:{msg.ts}"), ("U2", "up", 1, f"slack:C1:{msg.ts}")]
        await s.fake.wait_for(lambda f: len(f.ephemeral) == 3)
        assert {(e.user, e.text, e.thread_ts) for e in s.fake.ephemeral} == {
            ("U1", "Thanks for the feedback!", msg.ts), ("U2", "Thanks for the feedback!", msg.ts)}

        # a run this thread does not have (another thread's, or made up), and junk: refused, nothing kept
        other, _ = await planned(s, user="U3")
        other_info = await s.runtime.manager.session_info(ChatKey("slack", "C1", other.ts))
        assert other_info is not None
        await s.events.block_action(plan, user="U1", value=f"up:{other_info.session_id}.1",
                                    action_id="plan_feedback")
        await s.events.block_action(plan, user="U1", value=f"up:{info.session_id}.9", action_id="plan_feedback")
        await s.events.block_action(plan, user="U1", value="sideways:nothing", action_id="plan_feedback")
        await s.adapter.wait_inbound(lambda c: c["stale"] == 2 and c["invalid"] == 1, within=5)
        assert len(await s.runtime.store.recent_feedback()) == 2
        await s.fake.wait_for(lambda f: sum("no longer on record" in e.text for e in f.ephemeral) == 2)

        assert s.runtime.server is not None
        async with httpx.AsyncClient(base_url=s.runtime.server.base_url) as http:
            metrics = (await http.get("/metrics")).text
            assert 'bot_plan_feedback_total{platform="slack",rating="up"} 2.0' in metrics
            assert 'bot_plan_feedback_total{platform="slack",rating="down"} 1.0' in metrics
            assert 'bot_plan_feedback_total{platform="slack",rating="refused"} 2.0' in metrics
            page = (await http.get("/admin", headers={"Authorization": f"Bearer {TOKEN}"})).text
        assert "Feedback on plans (👍 1 · 👎 1)" in page
        assert f"slack:C1:{msg.ts}" in page and "U2" in page
