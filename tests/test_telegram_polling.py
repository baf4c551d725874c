"""Long polling acknowledges an update only after it is stored, so a kill never loses one."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import httpx
from telegram import Bot, Update

from adapters.telegram.polling import Poller
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_api import FakeTelegram
from tests.telegram_support import telegram_bot


async def until(condition: Callable[[], bool], within: float = 5.0) -> None:
    async with asyncio.timeout(within):
        while not condition():
            await asyncio.sleep(0.01)


async def test_an_update_is_acknowledged_only_after_its_handler_finished():
    async with FakeTelegram() as fake:
        bot = Bot(token=fake.token, base_url=fake.base_url)
        await bot.initialize()
        release = asyncio.Event()
        seen: list[int] = []

        async def handle(update: Update) -> None:
            seen.append(update.update_id)
            await release.wait()

        poller = Poller(bot, handle, timeout=1)
        await poller.start()
        try:
            uid = fake.send_text(4242, "hello")
            await until(lambda: bool(seen))
            # still pending at Telegram: a crash now means Telegram sends it again
            assert [u["update_id"] for u in fake.pending] == [uid]
            release.set()
            await until(lambda: not fake.pending)
            assert seen == [uid]
        finally:
            await poller.stop()
            await bot.shutdown()


async def test_a_failed_handler_gets_the_update_again():
    async with FakeTelegram() as fake:
        bot = Bot(token=fake.token, base_url=fake.base_url)
        await bot.initialize()
        attempts: list[int] = []

        async def handle(update: Update) -> None:
            attempts.append(update.update_id)
            if len(attempts) == 1:
                raise ConnectionError("store briefly unavailable")

        poller = Poller(bot, handle, timeout=1)
        await poller.start()
        try:
            uid = fake.send_text(4242, "hello")
            await until(lambda: len(attempts) >= 2 and not fake.pending)
            assert attempts == [uid, uid]
        finally:
            await poller.stop()
            await bot.shutdown()


async def test_polling_that_ended_by_itself_makes_healthz_say_so(tmp_path):
    async with FakeTelegram() as tg, FakeOpenAI([]) as llm, \
            telegram_bot(tmp_path, tg, llm.base_url, serve_http=True) as (runtime, adapter):
        assert runtime.server is not None
        async with httpx.AsyncClient(base_url=runtime.server.base_url, timeout=5) as http:
            before = await http.get("/healthz")
            assert before.status_code == 200 and before.json()["checks"]["telegram"] is True
            tg.webhook_url = "https://elsewhere.example/hook"  # set by someone else: getUpdates is refused (409)
            tg.send_text(4242, "/help")  # ends the long poll under way; the next one is refused
            await until(lambda: not adapter.poller.healthy(), within=10)
            after = await http.get("/healthz")
            assert after.status_code == 503 and after.json()["checks"]["telegram"] is False
