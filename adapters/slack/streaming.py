"""The answer as it is written, and the steps as task updates, in its Slack thread.

Slack's chat streaming (`chat.startStream`, `chat.appendStream`, `chat.stopStream`) makes one
message per step that grows as the model writes; in a channel a stream is for one recipient (the
asker and their team). The step's tool calls go into the same message as `task_update` chunks
("in_progress" when called, "complete" or "error" with its one-line summary when it returns),
after the text the model wrote before calling them, shown as a plan (`task_display_mode:
"plan"`, its title a `plan_update` chunk: "Planning your trip" over "Searching trains Beijing →
Hangzhou … done"); a workspace that refuses the plan display gets the timeline of task cards
instead, from then on.
Where Slack refuses to stream, the text goes into an ordinary message that is edited
(`chat.update`) instead, and the tasks are only in the status message (adapters.slack.progress).
One writer task per thread sends what arrived since its last call, at once for the first piece
and then at most every `interval` seconds, so the agent never waits on Slack and many small
pieces make few calls. `finish` ends the message and hands back its ts and text, so the answer
can take the streamed message's place instead of repeating it; `finish(..., session_status=)`
also moves the agent session on (`session_status` on chat.stopStream), and says whether it did.
Streaming is best effort, like
progress: a failed call leaves the message as it was, and the answer is posted in full all the
same.

A text the run withdraws (`reset`, agent_core.events.TextReset) cannot be taken back from a
stream (appendStream only adds), so its stream stops, the message says `WITHDRAWN` meanwhile, and
it stays the place of what follows: the next text goes into it by chat.update, and `finish`
marks it `revised`, so the answer replaces it whatever it holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from adapters.slack.errors import SlackCallFailed
from agent_core.events import TextDelta, ToolCalled, ToolFinished
from bot.surface import ChatKey

log = logging.getLogger(__name__)


Chunk = dict[str, Any]  # one of chat.*Stream's `chunks`: here markdown_text, task_update and plan_update
TASK_TEXT_LIMIT = 256  # a task's title and output are kept this short
WITHDRAWN = "…"  # what a withdrawn text's message says until the text that replaces it arrives


class StreamApi(Protocol):
    async def start(self, chat: ChatKey, text: str, recipient: str, tasks: Sequence[Chunk] = (),
                    mode: str | None = None) -> str:
        """chat.startStream with the first text (and tasks, after it) in task display `mode`; its ts."""

    async def append(self, chat: ChatKey, ts: str, text: str, tasks: Sequence[Chunk] = ()) -> None: ...

    async def stop(self, chat: ChatKey, ts: str, session_status: str | None = None) -> None: ...

    async def post(self, chat: ChatKey, text: str) -> str:
        """The fallback: an ordinary message with the text so far; its ts."""

    async def update(self, chat: ChatKey, ts: str, text: str) -> None: ...


@dataclass(frozen=True, slots=True)
class Streamed:
    ts: str | None  # None: nothing reached the thread
    text: str  # everything written (what the message shows, unless a call failed)
    revised: bool = False  # the message once held a withdrawn text: the answer replaces it whatever it holds
    status_sent: bool = False  # chat.stopStream carried the session status asked for


@dataclass
class _Stream:
    step: int
    recipient: str
    text: str = ""
    sent: int = 0  # characters of `text` the message has
    tasks: list[Chunk] = field(default_factory=list)  # task updates not yet sent, in order
    titles: dict[str, str] = field(default_factory=dict)  # tool_call_id -> its task's title
    plan_title: str = ""  # the plan's title, sent (plan_update) with the first tasks
    session_status: str | None = None  # what chat.stopStream moves the agent session to
    status_sent: bool = False
    ts: str | None = None
    mode: Literal["stream", "edit"] = "stream"
    failed: bool = False
    closing: bool = False
    last_call: float = 0.0
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    first_piece_at: float | None = None  # monotonic: the first text arrived, and reached Slack
    first_shown_at: float | None = None
    reuse: asyncio.Task[Streamed | None] | None = None  # a withdrawn text's message: this text goes there


class AnswerStreams:
    def __init__(self, api: StreamApi, *, interval: float = 0.5, clock: Callable[[], float] = time.monotonic) -> None:
        self._api = api
        self._interval = interval
        self._clock = clock
        self._streams: dict[ChatKey, _Stream] = {}
        self._ending: set[asyncio.Task[Streamed]] = set()
        self._withdrawn: dict[ChatKey, asyncio.Task[Streamed | None]] = {}  # the message a reset left
        self.first_shown: list[tuple[float, float]] = []  # (first piece, first shown) per stream, the last thousand
        self.plan_display = True  # False once the workspace refused it: tasks as a timeline

    def add(self, chat: ChatKey, event: TextDelta, recipient: str) -> None:
        """More text of the step; never waits on Slack."""
        stream = self._stream(chat, event.step, recipient)
        if stream.first_piece_at is None:
            stream.first_piece_at = self._clock()
        stream.text += event.text
        stream.wake.set()

    def task(self, chat: ChatKey, event: ToolCalled | ToolFinished, recipient: str, title: str = "",
             plan_title: str = "") -> None:
        """A tool call of the step (or its result) as a task update, after the step's text; never
        waits on Slack. A step whose text went by chat.update shows no tasks (its status message does)."""
        stream = self._stream(chat, event.step, recipient)
        if stream.mode == "edit" or stream.failed:
            return
        if plan_title and not stream.plan_title:
            stream.plan_title = _clip(plan_title, TASK_TEXT_LIMIT)
            stream.tasks.append({"type": "plan_update", "title": stream.plan_title})
        title = stream.titles.setdefault(event.tool_call_id, _clip(title or event.name, TASK_TEXT_LIMIT))
        chunk: Chunk = {"type": "task_update", "id": event.tool_call_id, "title": title,
                        "status": "in_progress"}
        if isinstance(event, ToolFinished):
            chunk["status"] = "complete" if event.ok else "error"
            if event.summary.strip():
                chunk["output"] = _clip(event.summary, TASK_TEXT_LIMIT)
        stream.tasks.append(chunk)
        stream.wake.set()

    def _stream(self, chat: ChatKey, step: int, recipient: str) -> _Stream:
        stream = self._streams.get(chat)
        if stream is not None and stream.step != step:
            self.end_step(chat)
            stream = None
        if stream is None:
            stream = self._streams[chat] = _Stream(step, recipient, reuse=self._withdrawn.pop(chat, None))
            stream.task = asyncio.create_task(self._writer(chat, stream), name=f"slack-stream-{chat}")
        return stream

    def reset(self, chat: ChatKey) -> None:
        """The text streamed so far is withdrawn: its stream stops and its message waits, saying
        WITHDRAWN, for the text (or the answer) that replaces it; never waits on Slack."""
        stream = self._streams.pop(chat, None)
        if stream is not None:  # taken now: a text that follows starts the stream that replaces it
            self._withdrawn[chat] = asyncio.create_task(self._withdraw(chat, stream))

    async def _withdraw(self, chat: ChatKey, stream: _Stream) -> Streamed | None:
        streamed = await self._end(stream)
        if streamed.ts is None:
            return None
        try:
            await self._api.update(chat, streamed.ts, WITHDRAWN)
        except SlackCallFailed as exc:
            log.info("slack: the withdrawn text in %s stays until it is replaced: %s", chat, exc)
        return Streamed(streamed.ts, "", revised=True)

    def end_step(self, chat: ChatKey) -> None:
        """The step's text is whole (a thought: tool calls follow): its message ends, in the background."""
        stream = self._streams.pop(chat, None)  # now: a text that follows starts a stream of its own
        if stream is not None:
            task = asyncio.create_task(self._end(stream))
            self._ending.add(task)
            task.add_done_callback(self._ending.discard)

    async def finish(self, chat: ChatKey, session_status: str | None = None) -> Streamed | None:
        """End the thread's message once everything written is in it, moving the agent session to
        `session_status` when given; None when nothing streamed."""
        stream = self._streams.pop(chat, None)
        if stream is None:
            withdrawn = self._withdrawn.pop(chat, None)  # nothing written since: the answer takes its place
            return await withdrawn if withdrawn is not None else None
        stream.session_status = session_status
        return await self._end(stream)

    async def _end(self, stream: _Stream) -> Streamed:
        stream.closing = True
        stream.closed.set()
        stream.wake.set()
        if stream.task is not None:
            await asyncio.gather(stream.task, return_exceptions=True)
        return Streamed(stream.ts, stream.text, revised=stream.reuse is not None and stream.ts is not None,
                        status_sent=stream.status_sent)

    async def close(self) -> None:
        for chat in list(self._streams):
            await self.finish(chat)
        for chat in list(self._withdrawn):
            await self.finish(chat)
        await asyncio.gather(*self._ending, return_exceptions=True)

    async def _writer(self, chat: ChatKey, stream: _Stream) -> None:
        if stream.reuse is not None:  # the withdrawn text's message takes this one, by chat.update
            left = await stream.reuse
            if left is not None and left.ts is not None:
                stream.ts, stream.mode = left.ts, "edit"
            else:
                stream.reuse = None
        while True:
            await self._send(chat, stream)
            if stream.closing:
                break
            stream.wake.clear()
            await stream.wake.wait()
            wait = stream.last_call + self._interval - self._clock()
            if wait > 0 and not stream.closing:  # pieces that arrive meanwhile go in one call
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stream.closed.wait(), wait)
        await self._send(chat, stream)
        if stream.ts is not None and stream.mode == "stream" and not stream.failed:
            await self._stop(chat, stream, stream.ts)

    async def _stop(self, chat: ChatKey, stream: _Stream, ts: str) -> None:
        if stream.session_status is not None:
            try:
                await self._api.stop(chat, ts, stream.session_status)
                stream.status_sent = True
                return
            except SlackCallFailed as exc:  # the session moves by agents.sessions.setStatus instead
                log.info("slack: chat.stopStream with session_status refused in %s: %s", chat, exc)
                if exc.error == "message_not_in_streaming_state":
                    return  # Slack stopped it already (its stop button)
        try:
            await self._api.stop(chat, ts)
        except SlackCallFailed as exc:  # not streaming any more: Slack's stop button ended it
            (log.info if exc.error == "message_not_in_streaming_state" else log.warning)(
                "slack: the stream in %s did not stop cleanly: %s", chat, exc)

    async def _send(self, chat: ChatKey, stream: _Stream) -> None:
        text = stream.text if stream.ts is not None or stream.text.strip() else ""  # blanks wait for text
        tasks, stream.tasks = ([] if stream.mode == "edit" else stream.tasks), []
        if not self.plan_display:
            tasks = [c for c in tasks if c["type"] != "plan_update"]
        if stream.failed or (len(text) == stream.sent and not tasks):
            return
        stream.last_call = self._clock()
        try:
            if stream.ts is None:
                stream.ts = await self._open(chat, stream, text, tasks)
            elif stream.mode == "stream":
                try:
                    await self._append(chat, stream.ts, text[stream.sent:], tasks)
                except SlackCallFailed as exc:  # the stream ended on Slack's side: edits from here on
                    log.info("slack: appendStream refused in %s (%s); the text goes by chat.update", chat, exc)
                    stream.mode = "edit"
                    if text.strip():
                        await self._api.update(chat, stream.ts, text)
            elif text.strip():
                await self._api.update(chat, stream.ts, text)
        except SlackCallFailed as exc:
            log.warning("slack: the answer in %s is not shown as it is written: %s", chat, exc)
            stream.failed = True
            return
        if stream.first_shown_at is None and stream.first_piece_at is not None and text.strip():
            stream.first_shown_at = self._clock()
            self.first_shown = [*self.first_shown[-999:], (stream.first_piece_at, stream.first_shown_at)]
        stream.sent = len(text)

    async def _append(self, chat: ChatKey, ts: str, text: str, tasks: Sequence[Chunk]) -> None:
        try:
            await self._api.append(chat, ts, text, tasks)
        except SlackCallFailed as exc:
            if exc.error != "invalid_chunks" or not any(c["type"] == "plan_update" for c in tasks):
                raise
            self._plan_refused(chat, exc)
            await self._api.append(chat, ts, text, [c for c in tasks if c["type"] != "plan_update"])

    def _plan_refused(self, chat: ChatKey, exc: SlackCallFailed) -> None:
        if self.plan_display:
            log.warning("slack: the workspace refuses steps as a plan (%s, in %s); they show as a timeline", exc, chat)
        self.plan_display = False

    async def _open(self, chat: ChatKey, stream: _Stream, text: str, tasks: Sequence[Chunk]) -> str | None:
        if stream.mode == "stream":
            try:
                if self.plan_display:
                    try:
                        return await self._api.start(chat, text, stream.recipient, tasks, "plan")
                    except SlackCallFailed as exc:
                        if exc.error not in ("invalid_arguments", "invalid_chunks"):
                            raise
                        self._plan_refused(chat, exc)
                plain = [c for c in tasks if c["type"] != "plan_update"]
                return await self._api.start(chat, text, stream.recipient, plain, "timeline" if plain else None)
            except SlackCallFailed as exc:
                log.info("slack: chat streaming refused in %s (%s); the text goes by chat.update", chat, exc)
                stream.mode = "edit"
        return await self._api.post(chat, text) if text else None  # tasks alone: nothing to post yet


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
