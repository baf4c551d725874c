"""Three `python bot.py` processes on one PostgreSQL database keep one limit, not three.

The web API's per-address limit (BOT_RATE_PER_IP=20: bursts of 5) is hit from one address on all
three processes at once; together they let the burst through once. Counted per process, as
before the buckets moved into the database, they let 15 through.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import pytest

from tests.bot_cluster import BotProcess, cluster_env
from tests.fakes.openai_server import FakeOpenAI
from tests.pg_support import fresh_database

pytestmark = pytest.mark.slow


async def test_three_processes_keep_an_address_to_its_limit(tmp_path: Path) -> None:
    async with fresh_database() as db, FakeOpenAI() as llm:
        env = cluster_env(db, llm.base_url, BOT_RATE_PER_IP="20")
        bots = await asyncio.gather(*[BotProcess.start(tmp_path, name, env) for name in "abc"])
        try:
            async with httpx.AsyncClient(timeout=10) as http:
                started = time.monotonic()
                answers = await asyncio.gather(*[
                    http.post(bot.url + "/api/login", json={"token": "guess"}) for bot in bots for _ in range(5)])
                elapsed = time.monotonic() - started
            codes = [a.status_code for a in answers]
            allowed = codes.count(204)
            assert set(codes) <= {204, 429}, codes
            assert 5 <= allowed <= 5 + int(elapsed * 20 / 60) + 1, (codes, elapsed)
            refused = next(a for a in answers if a.status_code == 429)
            assert 1 <= int(refused.headers["retry-after"]) <= 3  # one token every 3 s
        finally:
            await asyncio.gather(*[bot.stop() for bot in bots])
