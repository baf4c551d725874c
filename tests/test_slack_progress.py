"""The Slack status message: settling it never holds the question or the answer back on an edit,
but a status post still on the wire lands before them; the final text lands after every edit."""

from __future__ import annotations

import asyncio

from adapters.slack.progress import ProgressBoard
from agent_core.events import RunFinished, StepStarted, ToolCalled
from bot.surface import ChatKey, RunInfo

CHAT = ChatKey("slack", "C1", "171.0001")
RUN = RunInfo("s1", "en", "U1", "Ann", 10, "s1.1")


class _Slack:
    """post/edit for the board; each call can be held at a gate until the test opens it."""

    def __init__(self) -> None:
        self.posts: list[str] = []
        self.edits: list[str] = []
        self.stops: list[tuple[str, str | None]] = []  # (ts, the run its Stop button names; None: no button)
        self.post_gate = asyncio.Event()
        self.edit_gate = asyncio.Event()
        self.edit_started = asyncio.Event()
        self.post_gate.set()
        self.edit_gate.set()

    async def post(self, chat: ChatKey, text: str, stop: str | None) -> str:
        await self.post_gate.wait()
        self.posts.append(text)
        self.stops.append((f"ts{len(self.posts)}", stop))
        return f"ts{len(self.posts)}"

    async def edit(self, chat: ChatKey, ts: str, text: str, stop: str | None) -> None:
        self.edit_started.set()
        await self.edit_gate.wait()
        self.edits.append(text)
        self.stops.append((ts, stop))


async def _until(cond: object) -> None:
    async with asyncio.timeout(5):
        while not cond():  # type: ignore[operator]
            await asyncio.sleep(0)


async def test_settle_returns_before_the_final_edit_and_the_edit_still_lands():
    slack = _Slack()
    board = ProgressBoard(slack.post, slack.edit, interval=0.0)
    board.update(CHAT, StepStarted(1, 10), RUN)
    await _until(lambda: slack.posts)
    slack.edit_gate.clear()  # Slack is slow to answer chat.update
    async with asyncio.timeout(1):
        await board.settle(CHAT, "paused")  # the question may go out now
    assert slack.edits == []
    slack.edit_gate.set()
    await board.close()
    assert slack.edits and slack.edits[-1].startswith("⏸")


async def test_settle_waits_for_a_status_post_still_on_the_wire():
    slack = _Slack()
    slack.post_gate.clear()
    board = ProgressBoard(slack.post, slack.edit, interval=0.0)
    board.update(CHAT, StepStarted(1, 10), RUN)
    settling = asyncio.create_task(board.settle(CHAT, "done"))
    for _ in range(20):
        await asyncio.sleep(0)
    assert not settling.done(), "the question would land above the status message"
    slack.post_gate.set()
    async with asyncio.timeout(5):
        await settling
    assert slack.posts
    await board.close()
    assert slack.edits[-1].startswith("✅")


async def test_the_final_text_lands_after_an_edit_already_on_the_wire():
    slack = _Slack()
    board = ProgressBoard(slack.post, slack.edit, interval=0.0)
    board.update(CHAT, StepStarted(1, 10), RUN)
    await _until(lambda: slack.posts)
    slack.edit_gate.clear()
    board.update(CHAT, ToolCalled(1, "c1", "search_trains", {"from": "Beijing"}), RUN)
    async with asyncio.timeout(5):
        await slack.edit_started.wait()  # the step's edit is on the wire
    await board.settle(CHAT, "paused")
    slack.edit_gate.set()
    await board.close()
    assert len(slack.edits) == 2
    assert "search_trains" in slack.edits[0] and slack.edits[1].startswith("⏸")


async def test_the_stop_button_names_its_run_and_a_new_run_gets_its_own_message():
    slack = _Slack()
    board = ProgressBoard(slack.post, slack.edit, interval=0.0)
    board.update(CHAT, StepStarted(1, 10), RUN)
    await _until(lambda: slack.posts)
    assert slack.stops == [("ts1", "s1.1")]
    # the next run starts before the first one's end reached the thread (a Stop's notice on its way)
    board.update(CHAT, StepStarted(1, 10), RunInfo("s1", "en", "U1", "Ann", 10, "s1.2"))
    await _until(lambda: len(slack.posts) == 2 and ("ts1", None) in slack.stops)
    await board.close()
    assert ("ts2", "s1.2") in slack.stops and ("ts2", None) in slack.stops  # its own button, gone at the end
    assert [stop for ts, stop in slack.stops if ts == "ts1"] == ["s1.1", None]  # the first never names the second


async def test_the_end_of_a_run_overtaken_by_the_next_reaches_its_own_message_only():
    """The person wrote again as the first run's answer went out: the second run opened its
    message before the first run's answer settled the first. The first run's end ("done") goes
    to the first message; the second keeps its Stop button and its working status."""
    slack = _Slack()
    board = ProgressBoard(slack.post, slack.edit, interval=0.0)
    second = RunInfo("s1", "en", "U1", "Ann", 10, "s1.2")
    board.update(CHAT, StepStarted(1, 10), RUN)
    await _until(lambda: slack.posts)
    board.update(CHAT, StepStarted(1, 10), second)
    await _until(lambda: len(slack.posts) == 2)
    await board.settle(CHAT, "done", RUN.run)  # the first run's answer is posted
    board.update(CHAT, RunFinished(1), RUN)  # and its end shown
    await _until(lambda: any(e.startswith("✅") for e in slack.edits))
    assert [stop for ts, stop in slack.stops if ts == "ts2"] == ["s1.2"]  # untouched: still working
    await board.settle(CHAT, "done", second.run)
    await board.close()
    assert [stop for ts, stop in slack.stops if ts == "ts2"] == ["s1.2", None]
    assert sum(e.startswith("✅") for e in slack.edits) == 2  # each message ends once, as done
