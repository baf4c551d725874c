"""Three `python bot.py` processes on one PostgreSQL database, behind a round-robin balancer.

30 Telegram chats (webhook mode: the fake Bot API posts every update to the balancer, which
spreads them over the processes) and 10 Slack threads (HTTP events, also through the balancer)
each get a question and, once answered, a plan. One process is SIGKILLed while the questions
wait, another while the runs work (every model call held at a gate). The third carries on: every
chat gets its question once and its plan exactly once, every answer reaches the model, and the
dead process's runs continue on the survivor within the lease time (BOT_LEASE_S=2).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path

import pytest

from adapters.slack.mrkdwn import unescape
from bot.store.postgres.connect import LEASES_APPLICATION_NAME
from tests.bot_cluster import Balancer, BotProcess, cluster_env, fetch, owners, until
from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.fakes.slack_api import FakeSlack, SlackMessage
from tests.fakes.slack_events import SlackEvents
from tests.fakes.telegram_api import FakeTelegram
from tests.pg_support import fresh_database
from tests.slack_support import SECRET
from tests.telegram_support import containing

pytestmark = pytest.mark.slow

TG_CHATS = [9100 + i for i in range(30)]
SLACK_THREADS = 10
CHANNELS = {f"C{i}": "channel" for i in range(SLACK_THREADS)}  # Slack posts ~1 message/s per channel
LEASE_S = 2.0


def _script(key: str, gate: asyncio.Event) -> list:
    return [
        reply(tool_calls=[call("ask_human", {"inquire": f"Which day for {key}?"}, id=f"ask_{key}")]),
        reply(f"<answer>Plan for {key}: leave on the day you said.</answer>", gate=gate),
    ]


async def test_three_processes_share_the_chats_and_survive_two_kills(tmp_path: Path) -> None:
    keys = [f"tg{c}" for c in TG_CHATS] + [f"sl{i}" for i in range(SLACK_THREADS)]
    async with fresh_database() as db, Balancer() as lb, FakeTelegram() as tg, \
            FakeSlack(channels=CHANNELS) as slack, FakeOpenAI() as llm:
        gate = asyncio.Event()
        for key in keys:
            llm.add(*_script(key, gate), key=key)
        env = cluster_env(
            db, llm.base_url, TELEGRAM_BOT_TOKEN=tg.token, TELEGRAM_API_BASE_URL=tg.base_url,
            TELEGRAM_WEBHOOK_URL=lb.url + "/tg/hook", TELEGRAM_WEBHOOK_SECRET="hook-secret-1",
            SLACK_BOT_TOKEN=slack.bot_token, SLACK_SIGNING_SECRET=SECRET, SLACK_API_BASE_URL=slack.base_url,
        )
        bots = list(await asyncio.gather(*(BotProcess.start(tmp_path, f"p{i}", env) for i in range(3))))
        lb.backends = [b.url for b in bots]
        events = SlackEvents(lb.url + "/slack/events", SECRET)
        try:
            assert all([await b.healthy() for b in bots])  # each process serves /healthz on its own port
            await until(lambda: _processes(db, 3), 10, "three processes counted (they share Telegram's send budget)")

            # 1. forty conversations start, spread over the three processes
            for chat in TG_CHATS:
                tg.send_text(chat, f"Plan a weekend trip [conv:tg{chat}]")
            threads = []
            for i in range(SLACK_THREADS):
                msg = slack.user_message(f"C{i}", f"U{i}", f"<@{slack.bot_user_id}> plan a weekend trip [conv:sl{i}]")
                threads.append(msg)
                assert (await events.app_mention(msg)).status == 200  # 2xx: stored
            await _all_questions_posted(db, len(keys))
            assert len({u for u, status in tg.webhook_deliveries if status == 200}) == len(TG_CHATS)
            assert sum(1 for n in lb.served.values() if n > 0) == 3  # every process took requests

            # 2. a process dies while the questions wait; the answers go to the other two
            await bots[0].kill()
            await until(lambda: _processes(db, 2), 10, "the dead process no longer counted")
            for chat in TG_CHATS:
                tg.send_text(chat, "Friday")
            for i, msg in enumerate(threads):
                answer = slack.user_message(msg.channel, f"U{i}", "Friday", thread_ts=msg.ts)
                assert (await events.message(answer)).status == 200

            # 3. every run works (its model call held at the gate); the process with most of them dies
            await llm.wait_for(lambda f: sum(1 for r in f.requests if r.outcome == "pending") == len(keys), within=30)
            held = Counter((await owners(db)).values())
            victim = max(bots[1:], key=lambda b: held.get(b.pid, 0))
            survivor = next(b for b in bots[1:] if b is not victim)
            assert held.get(victim.pid, 0) > 0, held
            victim_chats = {k for k, pid in (await owners(db)).items() if pid == victim.pid}
            killed_at = time.monotonic()
            await victim.kill()
            gate.set()

            # 4. everything finishes on the survivor; the victim's chats within the lease time
            await tg.wait_for(lambda t: all(containing(t, c, f"Plan for tg{c}") for c in TG_CHATS), within=30)
            await slack.wait_for(lambda s: all(_posts(s, m, f"Plan for sl{i}") for i, m in enumerate(threads)),
                                 within=30)
            took = time.monotonic() - killed_at
            assert took < LEASE_S + 4, f"the killed process's chats took {took:.1f} s to finish elsewhere"
            assert await survivor.healthy()
            assert {pid for _k, pid in (await owners(db)).items()} <= {survivor.pid}
        finally:
            await events.aclose()
            for b in bots:
                await b.stop()

        # every chat: its question once, its plan exactly once, and its answer reached the model
        for chat in TG_CHATS:
            assert len(containing(tg, chat, f"Which day for tg{chat}?")) == 1, chat
            assert len(containing(tg, chat, f"Plan for tg{chat}")) == 1, chat
        for i, msg in enumerate(threads):
            assert len(_posts(slack, msg, f"❓ Which day for sl{i}?")) == 1, [m.text for m in slack.bot_posts(msg.channel, msg.ts)]
            assert len(_posts(slack, msg, f"Plan for sl{i}")) == 1, i
        for key in keys:
            served = [r for r in llm.served(key) if r.outcome == "served"]
            # a Slack channel's thread has several people: the model reads who answered
            said = f"@u{key.removeprefix('sl')}: Friday" if key.startswith("sl") else "Friday"
            assert served[-1].tool_results() == {f"ask_{key}": said}, key
        llm.assert_complete()
        assert tg.violations == []
        assert victim_chats  # the kill hit chats that were working, and they finished above


async def _processes(db: str, n: int) -> bool:
    """The live bot processes as each counts them (bot_processes: one leases listener each)."""
    rows = await fetch(db, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                           f"AND application_name = '{LEASES_APPLICATION_NAME}'")
    return int(rows[0][0]) == n


def _posts(slack: FakeSlack, thread: SlackMessage, needle: str) -> list[SlackMessage]:
    return [m for m in slack.bot_posts(thread.channel, thread.ts) if needle in unescape(m.text)]


async def _all_questions_posted(db: str, n: int, within: float = 40) -> None:
    async def posted() -> bool:
        rows = await fetch(db, "SELECT count(*) FROM questions WHERE status = 'waiting' "
                               "AND posted_message_id IS NOT NULL")
        return int(rows[0][0]) == n

    await until(posted, within, f"{n} questions posted and recorded")
