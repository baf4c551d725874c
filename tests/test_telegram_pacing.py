"""Sending within Telegram's limits, measured by the fake Bot API's own clock.

The outboxes run on the fake's clock (`tg.time_scale`, BOT_PLATFORM_TIME_SCALE: tests/fakes/pace.py)
and every figure below is in Telegram's seconds, times that scale; one test keeps the real pace."""

from __future__ import annotations

import asyncio
import functools
import time

import pytest
from telegram import Bot

from adapters.telegram.budget import BudgetShare, share
from adapters.telegram.errors import AdapterStopped
from adapters.telegram.lane import Delivery
from adapters.telegram.pacing import Outbox
from adapters.telegram.progress import RunProgress
from adapters.telegram.transport import Transport
from agent_core.events import RunFinished, StepStarted, ToolCalled, ToolFinished
from tests.fakes.telegram_api import FakeTelegram


@pytest.fixture
async def tg():
    async with FakeTelegram() as fake:
        yield fake


@pytest.fixture
async def transport(tg):
    bot = Bot(tg.token, base_url=tg.base_url)
    async with bot:
        yield Transport(bot)


async def test_processes_on_one_database_share_the_bot_wide_budget():
    outbox = Outbox()
    counted, failed = [3], [0]

    async def processes() -> int:
        if counted[0] < 0:
            failed[0] += 1
            raise ConnectionError("the database is away")
        return counted[0]

    budget = BudgetShare(outbox.pacer, processes, every_s=0.02)
    await budget.start()
    try:
        assert outbox.pacer.limit == 9  # set before the first send: 29 a second shared by three
        counted[0] = -1  # a failed count keeps the share
        async with asyncio.timeout(2):
            while failed[0] < 3:
                await asyncio.sleep(0.01)
        assert outbox.pacer.limit == 9
        counted[0] = 1  # the others are gone: the whole budget
        async with asyncio.timeout(2):
            while outbox.pacer.limit != 29:
                await asyncio.sleep(0.01)
    finally:
        await budget.stop()
    assert share(29, 100) == 1  # never nothing


async def test_without_pacing_the_fake_counts_violations(tg, transport):
    tg.send_text(1, "hi")
    await asyncio.gather(*(transport.send_html(1, f"m{i}") for i in range(3)))
    assert {v.kind for v in tg.violations} == {"chat"}


@pytest.mark.real_pace
async def test_one_chat_gets_one_message_per_second_in_order(tg, transport):
    assert tg.time_scale == 1.0
    tg.send_text(1, "hi")
    outbox = Outbox(time_scale=tg.time_scale)
    try:
        ids = await asyncio.gather(*(outbox.send(1, "answer", functools.partial(transport.send_html, 1, f"part {i}"))
                                     for i in range(3)))
    finally:
        await outbox.close()
    sent = tg.bot_messages(1)
    assert [m.text for m in sent] == ["part 0", "part 1", "part 2"] and ids == [m.message_id for m in sent]
    assert sent[2].sent_at - sent[0].sent_at >= 2.0
    assert tg.violations == []


async def test_the_whole_bot_stays_under_thirty_per_second(tg, transport):
    deliveries: list[Delivery] = []
    outbox = Outbox(observer=deliveries.append, time_scale=tg.time_scale)
    chats = range(1, 46)
    for c in chats:
        tg.send_text(c, "hi")
    try:
        await asyncio.gather(*(outbox.send(c, "answer", functools.partial(transport.send_html, c, "hello"))
                               for c in chats))
    finally:
        await outbox.close()
    assert all(len(tg.bot_messages(c)) == 1 for c in chats)
    assert tg.violations == []
    assert len(deliveries) == 45 and max(d.queued_s for d in deliveries) >= 0.5 * tg.time_scale  # some had to wait


async def test_urgent_sends_go_before_progress_in_the_global_queue(tg, transport):
    outbox = Outbox(global_limit=1, global_window=0.5, time_scale=tg.time_scale)
    for c in (1, 2, 3):
        tg.send_text(c, "hi")
    progress = [RunProgress(transport, c, "en", 10, grace=0) for c in (1, 2)]
    try:
        for p in progress:
            p.apply(StepStarted(1, 10))
            outbox.offer(p.chat_id, p)
        await asyncio.sleep(0)  # chat 1 holds the only slot, chat 2 waits for the next one
        await outbox.send(3, "answer", functools.partial(transport.send_html, 3, "answer"))
        await tg.wait_for(lambda t: len(t.bot_messages(2)) == 1)
    finally:
        await outbox.close()
    order = [r.chat_id for r in tg.calls("sendMessage") if r.ok]
    assert order == [1, 3, 2]  # the answer overtook the progress message that waited longer


class _Noted:
    """A progress source that notes when it is flushed."""

    def __init__(self, order: list[str]) -> None:
        self.order, self.pending = order, True

    def has_work(self) -> bool:
        return self.pending

    async def flush(self) -> bool:
        self.pending = False
        self.order.append("progress")
        return True


async def test_progress_lets_work_made_ready_after_it_go_first():
    """A run's event offers progress just before the run sends its next model request, whose
    body aiohttp writes from a task of its own, made after the lane's: that work goes first, and
    the edit's (a millisecond or two of CPU) after it, not in the model request's way."""
    outbox, order = Outbox(), list[str]()
    try:
        outbox.offer(1, _Noted(order))
        asyncio.get_running_loop().call_soon(order.append, "model request")
        await asyncio.wait_for(outbox.lane(1).drained(), 3)
    finally:
        await outbox.close()
    assert order == ["model request", "progress"]


async def test_a_lane_closed_before_its_progress_went_out_sends_none():
    outbox, order = Outbox(), list[str]()
    outbox.offer(1, _Noted(order))
    await asyncio.sleep(0)  # the lane has begun, and lets ready work go first
    await outbox.lane(1).close()
    await outbox.close()
    assert order == []


async def test_progress_collapses_edits_and_skips_identical_text(tg, transport):
    tg.send_text(1, "hi")
    outbox = Outbox(time_scale=tg.time_scale)
    progress = RunProgress(transport, 1, "en", 20, grace=0, interval=outbox.private_interval)
    try:
        progress.apply(StepStarted(1, 20))
        outbox.offer(1, progress)
        await tg.wait_for(lambda t: len(t.bot_messages(1)) == 1)
        for step in range(2, 12):  # ten events inside the one-second gap
            progress.apply(StepStarted(step, 20))
            progress.apply(ToolCalled(step, f"c{step}", "lookup", {"city": f"C{step}"}))
            progress.apply(ToolFinished(step, f"c{step}", "lookup", True, f"C{step}: sunny"))
            outbox.offer(1, progress)
        await asyncio.wait_for(outbox.lane(1).drained(), 3)
        # made while the chat could not send: held (sent at the gap's end they would land in the
        # middle of the next model call, just before its question or answer)
        assert tg.bot_messages(1)[0].edits == [] and progress.has_work() is False
        await asyncio.sleep(max(0.0, outbox.lane(1).next_at - time.monotonic()))  # the gap is over
        progress.apply(ToolCalled(12, "c12", "lookup", {"city": "C12"}))  # the model's next reply
        outbox.offer(1, progress)
        await asyncio.wait_for(outbox.lane(1).drained(), 3)
        assert "Step 11/20" in tg.bot_messages(1)[0].text and "C12" in tg.bot_messages(1)[0].text
        assert len(tg.bot_messages(1)[0].edits) == 1  # one edit carried all eleven steps
        assert not progress.has_work()
        assert await progress.flush() is False  # identical text: nothing sent
        progress.apply(RunFinished(12))
        outbox.offer(1, progress)
        await asyncio.wait_for(outbox.lane(1).drained(), 3)
    finally:
        await outbox.close()
    text = tg.bot_messages(1)[0].text
    assert "… 6 earlier calls" in text and "C11: sunny" in text and "Done" in text
    assert tg.violations == [] and not [r for r in tg.requests if r.error and "not modified" in r.error]


async def test_a_flood_wait_holds_every_send_of_that_chat_only(tg, transport):
    for c in (1, 2):
        tg.send_text(c, "hi")
    outbox = Outbox(time_scale=tg.time_scale)
    tg.flood(1, 2)
    try:
        t0 = asyncio.get_running_loop().time()
        other = asyncio.ensure_future(outbox.send(2, "answer", functools.partial(transport.send_html, 2, "free")))
        await outbox.send(1, "answer", functools.partial(transport.send_html, 1, "after the wait"))
        waited = asyncio.get_running_loop().time() - t0
        await other
    finally:
        await outbox.close()
    assert waited >= 1.9 * tg.time_scale
    assert tg.bot_messages(2)[0].sent_at - tg.bot_messages(1)[0].sent_at < -1.0 * tg.time_scale  # chat 2 did not wait
    assert [v.kind for v in tg.violations] == []


async def test_html_falls_back_to_plain_text_when_telegram_cannot_parse_it(tg, transport):
    tg.send_text(1, "hi")
    await transport.send_html(1, "<b>unclosed & <weird> tag")
    msg = tg.bot_messages(1)[0]
    assert msg.parse_mode is None and msg.text == "unclosed &  tag"


async def test_sends_queued_at_stop_fail_with_adapter_stopped(tg, transport):
    tg.send_text(1, "hi")
    outbox = Outbox()
    first = asyncio.ensure_future(outbox.send(1, "answer", functools.partial(transport.send_html, 1, "one")))
    second = asyncio.ensure_future(outbox.send(1, "answer", functools.partial(transport.send_html, 1, "two")))
    await tg.wait_for(lambda t: len(t.bot_messages(1)) == 1)
    await outbox.close()
    await first
    with pytest.raises(AdapterStopped):
        await second


async def test_a_draft_waits_while_the_bot_wide_budget_is_taken() -> None:
    """Drafts are previews: they never take a slot a real message is waiting for."""

    class Preview:
        def __init__(self) -> None:
            self.flushed = asyncio.Event()

        def has_work(self) -> bool:
            return not self.flushed.is_set()

        async def flush(self) -> bool:
            self.flushed.set()
            return True

    outbox = Outbox(global_limit=1, global_window=60.0)
    try:
        async with outbox.pacer.slot(0):  # a real message holds the only slot
            assert outbox.pacer.contended()
            skipped = Preview()
            outbox.offer_draft(7, skipped)
            assert 7 not in outbox._draft_lanes and not skipped.flushed.is_set()
        free = Outbox()
        try:
            sent = Preview()
            free.offer_draft(7, sent)
            async with asyncio.timeout(5):
                await sent.flushed.wait()
        finally:
            await free.close()
    finally:
        await outbox.close()
