"""Live progress in a Slack thread: one status message per run segment, edited in place.

A segment runs from a (re)start to a question or an answer. Its first event posts the status
message; later events edit it, at most once per `interval` seconds per thread, skipping
identical text, so a busy channel stays inside Slack's rate limits. Writes happen in a
background task per thread: the agent never waits on Slack to go on with its work. Before the
question or the answer is posted, `settle` forgets the segment and waits only until its status
message is *in* the thread (a post still on the wire), so the thread reads in order: status,
question, answer, status, answer. The final edit of the status text ("paused", "done") does not
hold the question or the answer back: it follows any edit already on the wire, in the background.
While the segment runs, its message carries a Stop button naming the run (`stop` is the run's
reference for post and edit, None once it ends: the final edit takes the button away). Events of
a new run while the last one's status is still open (its end not yet posted) open a new message;
the last one's message is closed then, and its outcome still reaches it when the run's answer,
question or notice settles it (`settle(..., run=)`), never the new run's message.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from adapters.slack.mrkdwn import live
from adapters.slack.texts import t
from adapters.slack.titles import args_line
from agent_core.events import Event, RunFinished, StepStarted, Thought, ToolCalled, ToolFinished
from bot.surface import ChatKey, RunInfo

log = logging.getLogger(__name__)

MAX_LINES = 12
Outcome = Literal["paused", "done", "stopped"]
Post = Callable[[ChatKey, str, str | None], Awaitable[str]]  # (chat, text, stop) -> ts of the new message
Edit = Callable[[ChatKey, str, str, str | None], Awaitable[None]]  # (chat, ts, text, stop)


@dataclass
class _Status:
    lang: str
    max_steps: int
    run: str = ""  # the run's reference: its Stop button names it
    step: int = 0
    head: str = ""
    thought: str = ""
    tools: dict[str, str] = field(default_factory=dict)  # tool_call_id -> line
    ts: str | None = None
    written: str = ""
    written_stop: str | None = None
    dirty: bool = False
    closed: bool = False
    closing: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    final: asyncio.Task[None] | None = None  # the final edit on its way: a later one waits for it

    def render(self) -> str:
        head = self.head or t("working", self.lang, step=self.step, max=self.max_steps or "?")
        lines = list(self.tools.values())
        if len(lines) > MAX_LINES:
            lines = [t("earlier", self.lang, n=len(lines) - MAX_LINES), *lines[-MAX_LINES:]]
        body = [head]
        if self.thought:
            body.append(f"_{self.thought}_")
        return "\n".join(body + lines)

    def apply(self, event: Event) -> None:
        if isinstance(event, StepStarted):
            self.step, self.max_steps = event.step, event.max_steps or self.max_steps
        elif isinstance(event, Thought):
            text = " ".join(event.text.split())
            self.thought = live(text if len(text) <= 200 else text[:199] + "…")
        elif isinstance(event, ToolCalled):
            self.tools[event.tool_call_id] = f"• `{event.name}` {live(args_line(event.arguments))} …"
        elif isinstance(event, ToolFinished):
            line = self.tools.get(event.tool_call_id, f"• `{event.name}`").removesuffix(" …")
            mark = "✓" if event.ok else "✗"
            summary = live(event.summary[:120])
            self.tools[event.tool_call_id] = f"{line} {mark} {summary}".rstrip()


class ProgressBoard:
    def __init__(self, post: Post, edit: Edit, *, interval: float = 1.0) -> None:
        self._post = post
        self._edit = edit
        self._interval = interval
        self._threads: dict[ChatKey, _Status] = {}
        self._overtaken: dict[ChatKey, _Status] = {}  # a run's segment closed when the next run began
        self._finals: set[asyncio.Task[None]] = set()  # final edits of settled segments

    def update(self, chat: ChatKey, event: Event, run: RunInfo) -> bool:
        """Record the event; the thread's writer task shows it soon. Never waits on Slack.

        Returns True when this event opened a new segment (a new status message)."""
        status = self._threads.get(chat)
        if isinstance(event, RunFinished):
            if status is not None and (not run.run or status.run == run.run):  # nor ends another run's
                status.head = t("done", status.lang, steps=event.steps or status.step)
                status.dirty = True
                self._wake(chat, status)
            return False
        if status is not None and status.run != run.run:  # a new run before the last one's end was posted
            self._settle_later(chat)
            status = None
        opened = status is None
        if status is None:
            status = self._threads[chat] = _Status(lang=run.lang, max_steps=run.max_steps, run=run.run)
        status.apply(event)
        status.dirty = True
        self._wake(chat, status)
        return opened

    def _settle_later(self, chat: ChatKey) -> None:
        status = self._overtaken[chat] = self._threads.pop(chat)
        task = asyncio.create_task(self._settled(chat, status, None), name=f"slack-progress-settle-{chat}")
        self._finals.add(task)
        task.add_done_callback(self._finals.discard)

    async def settle(self, chat: ChatKey, outcome: Outcome | None = None, run: str | None = None) -> None:
        """Forget the segment once its status message is in the thread; its final state follows.
        `run`: the run the outcome is of, when known (an answer's row names it): a newer run's
        segment is left alone (the run's own, closed when the newer one began, gets the outcome)."""
        status = self._threads.get(chat)
        if run and (status is None or status.run != run):
            earlier = self._overtaken.get(chat)
            if earlier is not None and earlier.run == run:
                del self._overtaken[chat]
                await self._settled(chat, earlier, outcome)
            return
        self._threads.pop(chat, None)
        await self._settled(chat, status, outcome)

    async def _settled(self, chat: ChatKey, status: _Status | None, outcome: Outcome | None) -> None:
        if status is None:
            return
        status.closed = True
        status.closing.set()
        if outcome == "done":
            status.head = t("done", status.lang, steps=status.step)
        elif outcome is not None:
            status.head = t(outcome, status.lang)
        writer = status.task
        if status.ts is None and writer is not None:
            # the first post may be on the wire: what comes next must land below it
            await asyncio.gather(writer, return_exceptions=True)
        if status.ts is None:
            return  # nothing was posted (or the post failed): nothing to finish
        final = status.final = asyncio.create_task(self._finish(chat, status, writer, status.final),
                                                   name=f"slack-progress-final-{chat}")
        self._finals.add(final)
        final.add_done_callback(self._finals.discard)

    async def _finish(self, chat: ChatKey, status: _Status, *before: asyncio.Task[None] | None) -> None:
        # an edit still on the wire (the writer's, an earlier final's) must not land after this text
        await asyncio.gather(*(t for t in before if t is not None), return_exceptions=True)
        await self._write(chat, status)

    async def close(self) -> None:
        for chat in list(self._threads):
            await self.settle(chat)
        self._overtaken.clear()
        await asyncio.gather(*self._finals, return_exceptions=True)

    def _wake(self, chat: ChatKey, status: _Status) -> None:
        if status.task is None or status.task.done():
            status.task = asyncio.create_task(self._writer(chat, status), name=f"slack-progress-{chat}")

    async def _writer(self, chat: ChatKey, status: _Status) -> None:
        while status.dirty and not status.closed:
            status.dirty = False
            await self._write(chat, status)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(status.closing.wait(), self._interval)

    async def _write(self, chat: ChatKey, status: _Status) -> None:
        text, stop = status.render(), None if status.closed else status.run
        if text == status.written and stop == status.written_stop:
            return
        try:
            if status.ts is None:
                status.ts = await self._post(chat, text, stop)
            else:
                await self._edit(chat, status.ts, text, stop)
            status.written, status.written_stop = text, stop
        except Exception as exc:  # progress is best effort: the run goes on without it
            log.warning("slack progress for %s not shown: %s", chat, exc)
