"""PostgreSQL lost while the bot serves, then back: nothing is acknowledged before it is stored,
nothing is lost, and the bot carries on by itself.

`python bot.py` (Telegram long polling) reaches PostgreSQL through a TCP relay in this test, so
the test can cut the database off (every connection dropped, new ones refused) and restore it.
While it is cut off, a person writes: the update stays unacknowledged in Telegram (the poller
does not move its offset), nothing is sent to that chat, /healthz says the store is down; once
the database is back the update is stored and answered, exactly once.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import aiohttp
import pytest

from tests.bot_cluster import BotProcess, cluster_env
from tests.fakes.openai_server import FakeOpenAI, reply
from tests.fakes.telegram_api import FakeTelegram
from tests.pg_support import fresh_database
from tests.telegram_support import containing

pytestmark = pytest.mark.slow

BEFORE, DURING = 7601, 7602


class Relay:
    """A TCP relay to PostgreSQL that can be cut off (connections dropped, new ones refused)."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = 0
        self._server: asyncio.Server | None = None
        self._pipes: set[asyncio.StreamWriter] = set()

    async def open(self) -> None:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", self.port, reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]

    async def cut(self) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()
        for writer in list(self._pipes):
            writer.transport.abort()
        self._pipes.clear()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self._pipes.update((writer, up_writer))
        await asyncio.gather(self._pump(reader, up_writer), self._pump(up_reader, writer), return_exceptions=True)

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        finally:
            self._pipes.discard(writer)
            writer.transport.abort()


async def _health(bot: BotProcess) -> int:
    async with aiohttp.ClientSession() as http, http.get(bot.url + "/healthz") as resp:
        return resp.status


async def test_the_database_lost_while_serving_then_back(tmp_path: Path) -> None:
    async with fresh_database() as db, FakeTelegram() as tg, FakeOpenAI() as llm:
        llm.add(reply("<answer>Plan for before: the lake.</answer>"), key="before")
        llm.add(reply("<answer>Plan for during: the hills.</answer>"), key="during")
        parts = urlsplit(db)
        relay = Relay(parts.hostname or "127.0.0.1", parts.port or 5432)
        await relay.open()
        via_relay = urlunsplit(parts._replace(netloc=f"{parts.username}@127.0.0.1:{relay.port}"))
        env = cluster_env(via_relay, llm.base_url, TELEGRAM_BOT_TOKEN=tg.token, TELEGRAM_API_BASE_URL=tg.base_url)
        bot = await BotProcess.start(tmp_path, "bot", env)
        try:
            tg.send_text(BEFORE, "A trip [conv:before]")
            await tg.wait_for(lambda t: bool(containing(t, BEFORE, "Plan for before")), within=20)

            await relay.cut()  # the database is gone
            update_id = tg.send_text(DURING, "A trip [conv:during]")
            async with asyncio.timeout(20):
                while await _health(bot) == 200:  # the health check notices
                    await asyncio.sleep(0.1)
            assert any(u["update_id"] == update_id for u in tg.pending)  # not acknowledged
            assert tg.bot_messages(DURING) == []
            assert llm.served("during") == []

            await relay.open()  # back, on the same port
            await tg.wait_for(lambda t: bool(containing(t, DURING, "Plan for during")), within=30)
            async with asyncio.timeout(20):
                while await _health(bot) != 200:
                    await asyncio.sleep(0.1)
        finally:
            await bot.stop()
            with contextlib.suppress(Exception):
                await relay.cut()
        assert len(containing(tg, DURING, "Plan for during")) == 1
        assert len(containing(tg, BEFORE, "Plan for before")) == 1
        llm.assert_complete()
