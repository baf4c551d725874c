"""A process stopped (SIGSTOP) past its chat's lease, then continued, cannot write or send.

Two `python bot.py` processes on one PostgreSQL (BOT_LEASE_S=2). Process A runs a Telegram
chat's run, whose model call is held; A is stopped; B takes the chat over (the sweep finds a
working run without a live owner), re-drives the run and posts the plan. Then A's model call is
answered and A continued: its writes are refused by the fence and it sends nothing to the chat,
yet it stays alive and serves a new chat afterwards.
"""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import pytest

from tests.bot_cluster import Balancer, BotProcess, cluster_env, fetch, owners, until
from tests.fakes.openai_server import FakeOpenAI, reply
from tests.fakes.telegram_api import FakeTelegram
from tests.pg_support import fresh_database
from tests.telegram_support import containing

pytestmark = pytest.mark.slow

CHAT, LATER_CHAT = 7301, 7302
KEY = f"telegram:{CHAT}:"
LEASE_S = 2.0
PLAN = "Plan for stop1: the coast road."


async def test_a_process_stopped_past_its_lease_writes_and_sends_nothing(tmp_path: Path) -> None:
    async with fresh_database() as db, Balancer() as lb, FakeTelegram() as tg, FakeOpenAI() as llm:
        held = asyncio.Event()
        llm.add(reply(f"<answer>{PLAN}</answer>", gate=held),  # A's call: answered only after A lost the chat
                reply(f"<answer>{PLAN}</answer>"), key="stop1")  # B's call after the takeover
        llm.add(reply("<answer>Plan for stop2: rejoined.</answer>"), key="stop2")
        env = cluster_env(db, llm.base_url, TELEGRAM_BOT_TOKEN=tg.token, TELEGRAM_API_BASE_URL=tg.base_url,
                          TELEGRAM_WEBHOOK_URL=lb.url + "/tg/hook", TELEGRAM_WEBHOOK_SECRET="hook-secret-2")
        a = await BotProcess.start(tmp_path, "a", env)
        lb.backends = [a.url]
        bots = [a]
        try:
            tg.send_text(CHAT, "Plan a trip along the coast [conv:stop1]")
            await llm.wait_for(lambda f: any(r.outcome == "pending" for r in f.requests), within=20)
            assert (await owners(db)).get(KEY) == a.pid
            b = await BotProcess.start(tmp_path, "b", env)  # started once A runs the chat
            bots.append(b)

            a.signal(signal.SIGSTOP)  # a stalled process: GC, a frozen VM
            stopped_at = time.monotonic()
            await tg.wait_for(lambda t: bool(containing(t, CHAT, PLAN)), within=LEASE_S + 10)
            assert time.monotonic() - stopped_at < LEASE_S + 3  # taken over within the lease (+ a sweep)
            await until(lambda: _released(db), 10, "B finished the chat and released it")
            sent_before = [(r.method, r.ok) for r in tg.requests if r.chat_id == CHAT]
            answers_before = await _answers(db)

            held.set()  # A's model call comes back while A is stopped ...
            a.signal(signal.SIGCONT)  # ... and A carries on as if it still owned the chat
            await until(lambda: _noticed_loss(a), 15, "A noticed that it lost the chat")
            assert await a.healthy()  # alive
            assert [(r.method, r.ok) for r in tg.requests if r.chat_id == CHAT] == sent_before  # sent nothing
            assert await _answers(db) == answers_before == 1  # wrote nothing: its step was refused
            assert len(containing(tg, CHAT, PLAN)) == 1

            lb.backends = [a.url]  # and it rejoins: a new chat is served by A
            tg.send_text(LATER_CHAT, "Another trip [conv:stop2]")
            await tg.wait_for(lambda t: bool(containing(t, LATER_CHAT, "Plan for stop2")), within=20)
        finally:
            for bot in bots:
                await bot.stop()
        llm.assert_complete()


async def _released(db: str) -> bool:
    return KEY not in await owners(db)


async def _answers(db: str) -> int:
    rows = await fetch(db, "SELECT count(*) FROM messages WHERE body LIKE $1", f"%{PLAN}%")
    return int(rows[0][0])


async def _noticed_loss(bot: BotProcess) -> bool:
    """By its renewal (bot.cluster.leases) or by a refused write (bot.chat.actor), whichever came first."""
    return bot.logged(f"lost the lease of {KEY}") or bot.logged(f"lease of {KEY!r} lost")
