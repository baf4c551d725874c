"""Telegram long polling with two `python bot.py` processes on one PostgreSQL: one poller at a time.

Each process reaches the fake Bot API through a proxy of its own, so the test sees who called
getUpdates. The standby never does while the poller lives; the poller is SIGKILLed (updates
arrive meanwhile), the standby takes over within the lease time, and every update is handled
exactly once: one plan per chat, one inbox row per update.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.bot_cluster import Balancer, BotProcess, cluster_env, fetch
from tests.fakes.openai_server import FakeOpenAI, reply
from tests.fakes.telegram_api import FakeTelegram
from tests.pg_support import fresh_database
from tests.telegram_support import containing

pytestmark = pytest.mark.slow

BEFORE = [7400 + i for i in range(8)]
AFTER = [7500 + i for i in range(8)]
LEASE_S = 2.0


def _polls(proxy: Balancer) -> int:
    return sum(1 for p in proxy.paths if p.lower().endswith("/getupdates"))


async def test_one_poller_at_a_time_and_the_standby_takes_over(tmp_path: Path) -> None:
    async with fresh_database() as db, FakeTelegram() as tg, FakeOpenAI() as llm, \
            Balancer() as proxy_a, Balancer() as proxy_b:
        for chat in BEFORE + AFTER:
            llm.add(reply(f"<answer>Plan for poll{chat}.</answer>"), key=f"poll{chat}")
        for proxy in (proxy_a, proxy_b):
            proxy.backends = [f"http://127.0.0.1:{tg.port}"]

        def env(proxy: Balancer) -> dict[str, str]:
            return cluster_env(db, llm.base_url, TELEGRAM_BOT_TOKEN=tg.token,
                               TELEGRAM_API_BASE_URL=proxy.url + "/bot", BOT_LOG_LEVEL="INFO")

        a = await BotProcess.start(tmp_path, "a", env(proxy_a))
        bots = [a]
        try:
            await tg.wait_for(lambda t: _polls(proxy_a) > 0, within=10)  # A polls
            b = await BotProcess.start(tmp_path, "b", env(proxy_b))
            bots.append(b)
            for chat in BEFORE:
                tg.send_text(chat, f"Plan a trip [conv:poll{chat}]")
            await tg.wait_for(lambda t: all(containing(t, c, f"Plan for poll{c}") for c in BEFORE), within=20)
            assert _polls(proxy_b) == 0  # the standby never called getUpdates

            polls_before_kill = _polls(proxy_a)
            await a.kill()
            killed_at = time.monotonic()
            for chat in AFTER:  # sent while nobody polls
                tg.send_text(chat, f"Plan a trip [conv:poll{chat}]")
            await tg.wait_for(lambda t: _polls(proxy_b) > 0, within=LEASE_S + 5)
            assert time.monotonic() - killed_at < LEASE_S + 1  # the standby took over within the lease
            await tg.wait_for(lambda t: all(containing(t, c, f"Plan for poll{c}") for c in AFTER), within=20)
            assert _polls(proxy_a) == polls_before_kill
        finally:
            for bot in bots:
                await bot.stop()

        for chat in BEFORE + AFTER:
            assert len(containing(tg, chat, f"Plan for poll{chat}")) == 1, chat
        rows = await fetch(db, "SELECT dedup_id, count(*) FROM inbox WHERE platform = 'telegram' GROUP BY dedup_id")
        assert len(rows) == len(BEFORE + AFTER) and all(r[1] == 1 for r in rows)
        llm.assert_complete()
        assert not [r for r in tg.requests if r.method == "getupdates" and r.error and "Conflict" in r.error
                    and r.at < killed_at]  # no two pollers at once while both lived
