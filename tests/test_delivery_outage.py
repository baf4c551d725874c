"""A platform outage loses nothing: deliveries wait it out, behind one breaker per platform.

Telegram answering 500 to every call for a while, then recovering: the question and the plan
due in that time arrive once, in order, without a restart. The outages here last seconds with
backoff scaled down to match (BOT_DELIVERY_BACKOFF_S 0.01 s, BOT_DELIVERY_MAX_BACKOFF_S 0.2 s);
with the defaults (0.5 s and 60 s) the same holds for outages of hours, up to each row's deadline.
"""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from bot.delivery.breaker import PlatformBreaker
from bot.surface import ChatKey
from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.fakes.telegram_api import FakeTelegram
from tests.telegram_support import containing, has, telegram_bot

CHAT = 7100
FAST = {"delivery_backoff_s": 0.01, "delivery_max_backoff_s": 0.2}
ADMIN = "admin-token-for-the-outage-test"
OUTAGE_S = 2.5  # longer than the old policy's eight attempts at this backoff (about 1.3 s)


def _failed_sends(tg: FakeTelegram, since: float) -> int:
    return sum(1 for r in tg.requests if r.at >= since and r.method == "sendmessage" and r.error)


async def _outage_while(tg: FakeTelegram, rt, since: float) -> None:
    """Hold the outage for OUTAGE_S once the bot has met it, checking what the operator sees."""
    await tg.wait_for(lambda t: _failed_sends(t, since) >= 3, within=10)
    async def breaker_open() -> None:
        while "telegram" not in rt.manager.platform_outages():
            await asyncio.sleep(0.01)
    await asyncio.wait_for(breaker_open(), 5)
    await rt.manager.metrics.refresh()
    page = rt.manager.metrics.render().decode()
    assert 'bot_platform_unreachable{platform="telegram"} 1.0' in page
    async with httpx.AsyncClient(base_url=rt.server.base_url) as http:
        admin = (await http.get("/admin", headers={"authorization": f"Bearer {ADMIN}"})).text
    assert "Waiting for a platform to come back (1)" in admin and "<td>telegram</td>" in admin
    await asyncio.sleep(OUTAGE_S)  # the outage's length is the scenario, not a wait for the bot
    tg.recover()


async def test_a_question_and_a_plan_due_during_an_outage_arrive_once_in_order(tmp_path):
    script = [
        reply(tool_calls=[call("ask_human", {"inquire": "Which day do you leave?"}, id="call_day")], latency_ms=200),
        reply("<answer>Leave on Friday by G1.</answer>", latency_ms=200),
    ]
    async with (
        FakeOpenAI(script) as llm,
        FakeTelegram() as tg,
        telegram_bot(tmp_path, tg, llm.base_url, serve_http=True, admin_token=ADMIN, **FAST) as (rt, _),
    ):
        tg.send_text(CHAT, "Plan a trip to Shanghai")
        await llm.wait_for_requests(1, within=10)  # the bot has the message; the model is thinking
        since = time.monotonic()
        tg.outage()
        await _outage_while(tg, rt, since)
        await tg.wait_for(has("Which day do you leave?", CHAT), within=10)

        tg.send_text(CHAT, "Friday")
        await llm.wait_for_requests(2, within=10)
        since = time.monotonic()
        tg.outage(502, "Bad Gateway")
        await _outage_while(tg, rt, since)
        await tg.wait_for(has("Leave on Friday by G1.", CHAT), within=10)
        await rt.manager.wait_until_idle(ChatKey("telegram", str(CHAT)), 5)

        assert len(containing(tg, CHAT, "Which day do you leave?")) == 1
        assert len(containing(tg, CHAT, "Leave on Friday by G1.")) == 1
        texts = [m.text for m in tg.bot_messages(CHAT)]
        question_at = next(i for i, t in enumerate(texts) if "Which day do you leave?" in t)
        plan_at = next(i for i, t in enumerate(texts) if "Leave on Friday by G1." in t)
        assert question_at < plan_at
        assert rt.manager.platform_outages() == {}
        assert llm.requests[1].tool_results()["call_day"] == "Friday"


async def test_a_permanent_refusal_still_gives_up_at_once(tmp_path):
    script = [reply("<answer>Your plan.</answer>")]
    async with FakeOpenAI(script) as llm, FakeTelegram() as tg, telegram_bot(tmp_path, tg, llm.base_url, **FAST) as (rt, _):
        tg.block(CHAT)
        tg.send_text(CHAT, "Plan a trip")
        async def given_up() -> list:
            while not (rows := await rt.store.failed_deliveries(10)):
                await asyncio.sleep(0.02)
            return rows
        failed = await asyncio.wait_for(given_up(), 10)
        assert [row.kind for row in failed] == ["answer"]
        refused = [r for r in tg.requests if r.method == "sendmessage" and r.error and "blocked" in r.error]
        assert len(refused) == 1  # tried once, never again
        assert rt.manager.platform_outages() == {}  # a refusal is the platform answering


async def test_the_breaker_lets_one_probe_through_and_releases_every_lane_when_it_answers():
    breaker = PlatformBreaker(trip_after=2, first_pause_s=0.05, max_pause_s=0.2)
    for _ in range(2):
        breaker.unreachable("telegram")
    assert breaker.is_open("telegram")
    far = time.monotonic() + 30
    lanes = [asyncio.create_task(breaker.admit("telegram", far)) for _ in range(3)]
    done, pending = await asyncio.wait(lanes, timeout=5, return_when=asyncio.FIRST_COMPLETED)
    assert len(done) == 1 and len(pending) == 2  # one probe, the others wait for its outcome
    assert breaker.waiting()["telegram"][0] == 2
    breaker.unreachable("telegram")  # the probe failed: a longer pause, then another probe
    done2, pending = await asyncio.wait(pending, timeout=5, return_when=asyncio.FIRST_COMPLETED)
    assert len(done2) == 1 and len(pending) == 1
    breaker.answered("telegram")  # the probe got through: everyone goes
    await asyncio.wait_for(asyncio.gather(*pending), 1)
    assert not breaker.is_open("telegram") and breaker.waiting() == {}
    assert await breaker.admit("slack", far)  # other platforms never waited


async def test_a_lane_that_waits_past_its_deadline_is_told_so():
    breaker = PlatformBreaker(trip_after=1, first_pause_s=10, max_pause_s=10)
    breaker.unreachable("slack")
    started = time.monotonic()
    assert await breaker.admit("slack", started + 0.1) is False
    assert time.monotonic() - started == pytest.approx(0.1, abs=0.5)
