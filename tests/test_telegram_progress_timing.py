"""A question or an answer is never held behind the run's own progress message.

Telegram takes about one message a second per chat, so every progress send or edit holds the
chat's next message for a second. A progress message created (or edited) in the middle of a
model call lands just before the question or the answer that call produces, and the person
waits that second for it. Progress goes out when the model has just replied (a tool call, a
thought), when the run pauses or ends, or when a change has waited `progress_patience`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adapters.telegram.lane import Delivery
from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.fakes.telegram_api import FakeTelegram
from tests.telegram_support import has, telegram_bot

pytestmark = pytest.mark.slow  # long: handed out first under xdist (tests/conftest.py)

CHAT = 5151
MODEL_MS = 1200  # a little longer than the progress message's grace (1 s)
QUESTION = "Which day do you leave?"


@contextlib.asynccontextmanager
async def _asked(tmp_path: Path, script: list[Any]) -> AsyncIterator[tuple[FakeTelegram, list[Delivery]]]:
    """A trip request, up to its question; afterwards: every scripted turn used, Telegram's limits
    kept, and no question or answer held back in the chat's queue."""
    deliveries: list[Delivery] = []
    async with FakeOpenAI(script) as llm, FakeTelegram() as tg, telegram_bot(tmp_path, tg, llm.base_url) as (_, adapter):
        adapter.outbox.observers.append(deliveries.append)
        tg.send_text(CHAT, "Plan a weekend in Shanghai")
        await tg.wait_for(has(QUESTION, CHAT), within=10)
        yield tg, deliveries
        llm.assert_complete()
        assert tg.violations == []
    held = [round(d.queued_s, 3) for d in deliveries if d.kind in ("question", "answer")]
    assert held and max(held) < 0.3, deliveries


async def test_a_first_reply_that_asks_gets_no_progress_message_above_its_question(tmp_path):
    script = [
        reply(tool_calls=[call("ask_human", {"inquire": QUESTION}, id="ask_1")], latency_ms=MODEL_MS),
        reply("<answer>Leave on Friday.</answer>", latency_ms=MODEL_MS),
    ]
    async with _asked(tmp_path, script) as (tg, _):
        assert QUESTION in tg.bot_messages(CHAT)[0].text  # nothing above it
        tg.send_text(CHAT, "Friday")
        await tg.wait_for(has("Leave on Friday.", CHAT), within=10)


async def test_progress_between_the_model_calls_holds_back_neither_question_nor_answer(tmp_path):
    script = [
        reply(tool_calls=[call("lookup", {"city": "Shanghai"}, id="look_1")], latency_ms=MODEL_MS),
        reply(tool_calls=[call("ask_human", {"inquire": QUESTION}, id="ask_1")], latency_ms=MODEL_MS),
        reply(tool_calls=[call("lookup", {"city": "Hangzhou"}, id="look_2")], latency_ms=MODEL_MS),
        reply("<answer>Leave on Friday; both cities are sunny.</answer>", latency_ms=MODEL_MS),
    ]
    async with _asked(tmp_path, script) as (tg, deliveries):
        progress = tg.bot_messages(CHAT)[0]
        assert "lookup" in progress.text and "Shanghai" in progress.text, progress.text
        # the question sealed it: the tool's result shows and the Stop button is gone
        await tg.wait_for(lambda t: "sunny" in t.bot_messages(CHAT)[0].text and not t.bot_messages(CHAT)[0].reply_markup,
                          within=5)
        tg.send_text(CHAT, "Friday")
        await tg.wait_for(has("Leave on Friday; both cities are sunny.", CHAT), within=10)
        await tg.wait_for(lambda t: "Done" in t.bot_messages(CHAT)[-2].text, within=5)  # the second run's progress
        assert [d.kind for d in deliveries].count("progress") >= 3  # it was shown, created and edited
