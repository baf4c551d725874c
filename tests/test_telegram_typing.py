"""The typing indicator: nothing for a run that replies at once, then one action every interval."""

from __future__ import annotations

import asyncio

from adapters.telegram.places import Place
from adapters.telegram.typing_indicator import TypingIndicator


class _Recorder:
    """Stands in for adapters.telegram.transport.Transport: records when typing was sent."""

    def __init__(self) -> None:
        self.sent: list[float] = []
        self.places: list[tuple[int, int | None]] = []
        self.arrived = asyncio.Event()

    async def typing(self, chat_id: int, thread: int | None = None) -> None:
        self.sent.append(asyncio.get_running_loop().time())
        self.places.append((chat_id, thread))
        self.arrived.set()


async def test_a_run_that_ends_within_the_delay_sends_no_typing_action():
    rec = _Recorder()
    typing = TypingIndicator(rec, interval=4.0, delay=0.5)  # type: ignore[arg-type]
    typing.start(Place(1))
    await asyncio.sleep(0)  # the task has started and waits out the delay
    typing.stop(Place(1))
    await typing.close()
    assert rec.sent == []
    assert not typing.active(Place(1))


async def test_the_first_action_comes_after_the_delay_and_then_every_interval():
    rec = _Recorder()
    typing = TypingIndicator(rec, interval=0.05, delay=0.2)  # type: ignore[arg-type]
    started = asyncio.get_running_loop().time()
    typing.start(Place(7))
    async with asyncio.timeout(5):
        while len(rec.sent) < 2:
            rec.arrived.clear()
            await rec.arrived.wait()
    await typing.close()
    assert rec.sent[0] - started >= 0.2
    assert rec.sent[1] - rec.sent[0] >= 0.05


async def test_a_second_start_while_typing_does_not_start_a_second_loop():
    rec = _Recorder()
    typing = TypingIndicator(rec, interval=10.0, delay=0.0)  # type: ignore[arg-type]
    typing.start(Place(3))
    typing.start(Place(3))
    async with asyncio.timeout(5):
        await rec.arrived.wait()
    await asyncio.sleep(0)
    await typing.close()
    assert len(rec.sent) == 1


async def test_in_a_forum_topic_the_action_names_the_topic():
    rec = _Recorder()
    typing = TypingIndicator(rec, interval=10.0, delay=0.0)  # type: ignore[arg-type]
    typing.start(Place(-100, 12))
    typing.start(Place(-100))  # the chat itself is another place: a loop of its own
    async with asyncio.timeout(5):
        while len(rec.places) < 2:
            rec.arrived.clear()
            await rec.arrived.wait()
    await typing.close()
    assert sorted(rec.places, key=str) == sorted([(-100, 12), (-100, None)], key=str)
