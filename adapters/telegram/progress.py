"""The live progress message of one run: state from agent events, one message edited in place.

`RunProgress` is a lane.ProgressSource: the chat's lane asks it for work when the chat may
send again, so however many events arrive during a wait, only the latest state is sent, and a
text identical to the one on screen is never sent at all. A run's progress message is created
only after `grace` seconds, so a quick run shows the typing indicator and then its reply.

When it goes out matters as much: Telegram takes about one message a second per chat
(`interval`), so a send or an edit holds the chat's next message for that long. A change made
while the chat could not send (the tool finished just after the model's reply went out, the next
model call has begun) would go out in the middle of that call, just before the question or the
answer the call may produce, and the person would wait for it. So a change goes out when it was
made while the chat was free to send (the model has just replied; a slow tool has finished),
while a tool runs (no model call is in flight), once the run has paused or ended, or once it has
waited `patience` seconds (a long model call still shows its step and its Stop button). The
question itself is not a progress line: its own message says it.

While the run works the message carries a Stop button naming the run (a press once another run
works stops nothing). Where the answer is not streamed as a draft (groups, or a chat whose
drafts Telegram refused), the message also shows the last lines of what the model is writing
(a withdrawn text, TextReset, goes from there at once). In a forum topic the message goes to the
topic; a topic that was deleted ends the progress of that run, logged once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from html import escape
from typing import Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import BadRequest

from adapters.telegram import texts
from adapters.telegram.places import thread_gone
from adapters.telegram.transport import Transport
from adapters.telegram.updates import stop_data
from agent_core.agents.toolcall import ASK_HUMAN
from agent_core.events import (
    Event,
    QuestionAsked,
    RunFinished,
    StepStarted,
    TextDelta,
    TextReset,
    Thought,
    ToolCalled,
    ToolFinished,
)

log = logging.getLogger(__name__)

_PAIRS = (("departure_city_name", "arrival_city_name"), ("depart_station", "arrive_station"),
          ("origin", "destination"))
_KEYS = ("city_name", "city", "query", "depart_date", "checkin_date", "checkout_date", "hotel_name",
         "landmark", "seat_name", "is_transfer")
_SHOWN_TOOLS = 5
_WRITING_LINES = 4  # the last lines of the text being written, shown where there is no draft
_WRITING_CHARS = 600


def key_args(arguments: dict[str, Any]) -> str:
    """The few arguments that tell a person what a tool call is about, on one line."""
    bits: list[str] = []
    for a, b in _PAIRS:
        if arguments.get(a) or arguments.get(b):
            bits.append(f"{_short(arguments.get(a, '?'))} → {_short(arguments.get(b, '?'))}")
    for key in _KEYS:
        value = arguments.get(key)
        if value not in (None, "", []):
            bits.append(f"transfer={value}" if key == "is_transfer" else _short(value))
    return " · ".join(bits)[:160]


def _short(value: object, limit: int = 40) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(slots=True)
class _ToolLine:
    call_id: str
    name: str
    args: str
    ok: bool | None = None
    summary: str = ""


class RunProgress:
    def __init__(self, transport: Transport, chat_id: int, lang: str, max_steps: int,
                 grace: float = 1.0, clock: Any = time.monotonic,
                 ours: Callable[[], bool] = lambda: True, run: str = "", patience: float = 4.0,
                 interval: float = 1.0, thread: int | None = None) -> None:
        self.transport = transport
        self.run = run  # the run's reference (bot.surface.run_ref): its Stop button stops that run only
        self.ours = ours  # a process that lost the chat to another (bot.cluster.ownership) edits nothing
        self.chat_id = chat_id
        self.thread = thread  # the forum topic, if the conversation is one
        self.lang = lang
        self.step = 0
        self.max_steps = max_steps
        self.tools: list[_ToolLine] = []
        self.thought = ""
        self.writing = ""  # the step's text as the model writes it (shown when `show_writing`)
        self.show_writing = chat_id < 0  # groups have no drafts
        self.finished_steps: int | None = None
        self.message_id: int | None = None
        self.sent_text: str | None = None
        self.sent_stop = False  # the message on screen has the Stop button
        self.sealed = False  # a question or an answer was posted after this message's place
        self.gave_up = False
        self._clock = clock
        self._visible_at = clock() + grace
        self.patience = patience
        self.interval = interval  # the chat's gap between two messages (pacing.Outbox)
        self._changed_at = clock()  # the last change of what the message would show
        self._sent_at: float | None = None
        self.reminder: asyncio.TimerHandle | None = None  # the adapter's timer for a held change

    # -- state ------------------------------------------------------------------------------
    def apply(self, event: Event) -> None:
        if (isinstance(event, ToolCalled | ToolFinished) and event.name == ASK_HUMAN) or isinstance(event, QuestionAsked):
            return  # the question is posted as its own message
        if not isinstance(event, TextDelta | TextReset) or self.show_writing:
            self._changed_at = self._clock()
        if isinstance(event, TextReset):
            self.writing = ""  # withdrawn: not shown a moment longer
        elif isinstance(event, StepStarted):
            self.step = event.step
            self.max_steps = event.max_steps or self.max_steps
            self.thought = self.writing = ""
        elif isinstance(event, TextDelta):
            self.writing += event.text
        elif isinstance(event, Thought):
            self.thought, self.writing = _short(event.text, 200), ""
        elif isinstance(event, ToolCalled):
            self.writing = ""
            self.tools.append(_ToolLine(event.tool_call_id, event.name, key_args(event.arguments)))
        elif isinstance(event, ToolFinished):
            for line in reversed(self.tools):
                if line.call_id == event.tool_call_id:
                    line.ok, line.summary = event.ok, _short(event.summary, 120)
                    break
        elif isinstance(event, RunFinished):
            self.finished_steps = event.steps
            self.thought = self.writing = ""

    def seal(self) -> None:
        self.sealed = True

    def html(self) -> str:
        zh = self.lang == "zh"
        if self.finished_steps is not None:
            head = f"✅ <b>完成</b> · 共 {self.finished_steps} 步" if zh else f"✅ <b>Done</b> · {self.finished_steps} steps"
        else:
            of = f"/{self.max_steps}" if self.max_steps else ""
            head = f"⏳ <b>第 {self.step}{of} 步</b>" if zh else f"⏳ <b>Step {self.step}{of}</b>"
        lines = [head]
        hidden = len(self.tools) - _SHOWN_TOOLS
        if hidden > 0:
            lines.append(f"… 之前 {hidden} 次查询" if zh else f"… {hidden} earlier calls")
        for t in self.tools[-_SHOWN_TOOLS:]:
            mark = "🔧" if t.ok is None else ("✔️" if t.ok else "⚠️")
            line = f"{mark} <code>{escape(t.name, quote=False)}</code>"
            if t.args:
                line += f" {escape(t.args, quote=False)}"
            if t.summary:
                line += f"\n    <i>{escape(t.summary, quote=False)}</i>"
            lines.append(line)
        if self.thought:
            lines.append(f"💭 <i>{escape(self.thought, quote=False)}</i>")
        if self.writing.strip() and self.show_writing:
            lines.append(f"✍️ {escape(last_lines(self.writing), quote=False)}")
        return "\n".join(lines)

    def stop_button(self) -> InlineKeyboardMarkup | None:
        """The Stop button while the run works; none once it asked, answered or ended."""
        if self.finished_steps is not None or self.sealed:
            return None
        return InlineKeyboardMarkup([[InlineKeyboardButton(texts.text("stop_button", self.lang), callback_data=stop_data(self.run))]])

    # -- lane.ProgressSource ----------------------------------------------------------------
    def has_work(self) -> bool:
        if self.gave_up or not self.ours():
            return False
        if self.message_id is None:
            # never start a progress message above a question or answer already posted
            return (not self.sealed and self.finished_steps is None and self._clock() >= self._visible_at
                    and self._due())
        changed = self.html() != self.sent_text or (self.stop_button() is not None) != self.sent_stop
        return changed and (self.sealed or self.finished_steps is not None or self._due())

    def due_in(self) -> float | None:
        """Seconds until a change held now becomes due by patience; None when none is held (a
        paused or finished run's last edit need not wait: it goes out once the chat may send)."""
        if self.gave_up or self.sealed or self.finished_steps is not None:
            return None
        if self.message_id is not None and self.html() == self.sent_text:
            return None
        return 0.0 if self._due() else self._changed_at + self.patience - self._clock()

    def _due(self) -> bool:
        """May a working run's change go out (see the module's docstring)?"""
        free_since = self._visible_at if self._sent_at is None else self._sent_at + self.interval
        tool_running = bool(self.tools) and self.tools[-1].ok is None
        return (self._changed_at >= free_since or tool_running
                or self._clock() - self._changed_at >= self.patience)

    @property
    def visible_at(self) -> float:
        return self._visible_at

    async def flush(self) -> bool:
        if not self.has_work():
            return False
        text, stop = self.html(), self.stop_button()
        if self.message_id is None:
            try:
                self.message_id = await self.transport.send_html(self.chat_id, text, markup=stop, thread=self.thread)
            except BadRequest as exc:
                if not thread_gone(str(exc)):
                    raise
                log.warning("telegram: topic %s of chat %s was deleted: no progress for run %s", self.thread,
                            self.chat_id, self.run)
                self.gave_up = True
                return True
            self._sent(text, stop)
            return True
        try:
            await self.transport.edit_html(self.chat_id, self.message_id, text, markup=stop)
        except BadRequest as exc:
            detail = str(exc).lower()
            if "not modified" in detail:
                self._sent(text, stop)
                return True
            if "not found" in detail and not self.sealed:
                self.message_id = None  # the person deleted it: start a fresh one
                return True
            self.gave_up = True
            raise
        self._sent(text, stop)
        return True

    def _sent(self, text: str, stop: InlineKeyboardMarkup | None) -> None:
        self.sent_text, self.sent_stop, self._sent_at = text, stop is not None, self._clock()


def last_lines(text: str) -> str:
    """The end of `text`: its last few lines, at most a few hundred characters."""
    tail = "\n".join(text.strip().splitlines()[-_WRITING_LINES:])
    return tail if len(tail) <= _WRITING_CHARS else "…" + tail[-_WRITING_CHARS:]
