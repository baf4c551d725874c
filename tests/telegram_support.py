"""Test support for the Telegram surface: the real runtime (store, SessionManager, agent, LLM
client) with the real TelegramAdapter, talking HTTP to the fake Bot API and the fake OpenAI."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from adapters.runtime import Runtime, build_runtime
from adapters.telegram import TelegramAdapter
from tests.fakes.telegram_api import FakeTelegram
from tests.fakes.telegram_state import StoredMessage
from tests.spine_support import make_llm, make_settings, make_tools, plain_prompt
from tools.collection import ToolCollection


@contextlib.asynccontextmanager
async def telegram_bot(tmp: Path, tg: FakeTelegram, openai_url: str, *, serve_http: bool = False,
                       tools: ToolCollection | None = None, **overrides: Any) -> AsyncIterator[tuple[Runtime, TelegramAdapter]]:
    values: dict[str, Any] = {"port": 0, **overrides}
    settings = make_settings(tmp, telegram_bot_token=tg.token, telegram_api_base_url=tg.base_url, **values)
    llm = make_llm(openai_url)
    runtime = build_runtime(settings, model=llm, tools=tools or make_tools(), prompt=plain_prompt,
                            serve_http=serve_http)
    adapter = next(a for a in runtime.adapters if isinstance(a, TelegramAdapter))
    await runtime.start()
    try:
        yield runtime, adapter
    finally:
        await runtime.stop()
        await llm.aclose()


def texts(tg: FakeTelegram, chat_id: int) -> list[str]:
    return [m.text for m in tg.bot_messages(chat_id)]


def containing(tg: FakeTelegram, chat_id: int, needle: str) -> list[StoredMessage]:
    return [m for m in tg.bot_messages(chat_id) if needle in m.text]


def has(needle: str, chat_id: int, count: int = 1) -> Callable[[FakeTelegram], bool]:
    """A predicate for FakeTelegram.wait_for: `count` bot messages in the chat contain `needle`."""
    return lambda tg: len(containing(tg, chat_id, needle)) >= count
