"""The terminal chat: `python bot.py chat` talks to the same runtime as every other surface."""

from __future__ import annotations

import asyncio
import shutil
import sys
import textwrap
import threading
import uuid
from collections.abc import Awaitable, Callable
from typing import TextIO, TypeVar

from agent_core.events import (
    AnswerReady,
    Event,
    QuestionAsked,
    StepStarted,
    Thought,
    ToolCalled,
    ToolFinished,
    Verdict,
)
from agent_core.plan_words import place, priced, share_text, total_text
from bot.sessions import SessionManager
from bot.surface import Attachment, ChatKey, IncomingMessage, Notice, PartLog, RunInfo
from tools.plan import Leg, TripPlan
from tools.plan_costs import CostLine, plan_costs

PROMPT = "> "
T = TypeVar("T")


class ConsoleSurface:
    platform = "console"
    signs_off = False  # one person at a terminal, no buttons: a team plan is final (bot.surface.Surface)

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.chat = ChatKey("console", "local", "")
        self.turn_done = asyncio.Event()  # set when the bot waits for the person again
        self.options: tuple[str, ...] = ()  # of the last question: "2" picks the second

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    def _print(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    async def show_progress(self, chat: ChatKey, event: Event, run: RunInfo) -> None:
        if isinstance(event, StepStarted):
            self._print(f"  · step {event.step}/{event.max_steps}")
        elif isinstance(event, Thought):
            self._print(_wrapped(event.text, "  · ", "    "))
        elif isinstance(event, ToolCalled) and event.name not in ("ask_human", "submit_plan"):
            args = ", ".join(f"{k}={str(v)[:40]}" for k, v in list(event.arguments.items())[:4])
            self._print(f"  → {event.name}({args})")
        elif isinstance(event, ToolFinished):
            self._print(f"  {'✓' if event.ok else '✗'} {event.summary[:160]}")

    async def post_question(self, chat: ChatKey, question: QuestionAsked, run: RunInfo, parts: PartLog) -> None:
        self.options = question.options
        self._print(f"\n? {question.question}")
        for i, option in enumerate(question.options, 1):
            self._print(f"   {i}. {option}")
        self.turn_done.set()
        await parts.sent(uuid.uuid4().hex[:12], more=False)

    async def post_answer(self, chat: ChatKey, answer: AnswerReady, verdict: Verdict | None, run: RunInfo,
                          parts: PartLog) -> None:
        self._print("\n" + answer.text)
        if answer.plan is not None and answer.plan.title not in answer.text:
            self._print(render_plan(answer.plan, run.lang))
        if verdict is not None and not verdict.graded:
            self._print("[未评分：没有可核对的内容]" if run.lang == "zh" else "[not graded: nothing could be checked]")
        elif verdict is not None:
            label = verdict.label if run.lang == "zh" else verdict.label_en
            self._print(f"[{label}]")
        self.turn_done.set()

    async def members(self, chat: ChatKey) -> frozenset[str] | None:
        return None

    async def post_file(self, chat: ChatKey, file: Attachment, parts: PartLog) -> None:
        self._print(f"📎 {file.filename} ({len(file.content.encode())} bytes)")

    async def post_notice(self, chat: ChatKey, notice: Notice, parts: PartLog) -> None:
        self._print(f"({notice.text})")
        if notice.kind != "queued":
            self.turn_done.set()


def _wrapped(text: str, first: str, rest: str) -> str:
    """Whole sentences, wrapped to the terminal: a thought is never cut off mid-word."""
    width = max(40, shutil.get_terminal_size((100, 24)).columns - 1)
    out: list[str] = []
    for i, para in enumerate(p for p in text.strip().splitlines() if p.strip()):
        out.extend(textwrap.wrap(para, width, initial_indent=first if i == 0 else rest, subsequent_indent=rest,
                                 break_long_words=True, break_on_hyphens=False) or [first.rstrip()])
    return "\n".join(out) if out else first.rstrip()


def render_plan(plan: TripPlan, lang: str = "en") -> str:
    """The plan's priced rows (tools.plan_costs) as every surface shows them: they add up to the total."""
    costs = plan_costs(plan)
    lines = [f"== {plan.title} ({plan.start_date} → {plan.end_date}) =="]
    for person in plan.party:
        lines.append(f"  {person.name} ({place(person.home_city, lang)}): {share_text(costs, person.name, lang, plan.currency)}")
        mine = costs.of(person.name)
        lines += [_leg_line(leg, mine[i], lang, "    ") for i, leg in enumerate(person.legs)]
    shared = [c for c in costs.lines if not c.who]
    for line in shared:
        if line.kind == "leg":
            lines.append(_leg_line(plan.legs[line.index], line, lang, "  "))
        elif line.kind == "stay":
            stay = plan.stays[line.index]
            lines.append(f"  hotel: {place(stay.name, lang)} {stay.checkin_date}–{stay.checkout_date}  {priced(line, lang)}")
        else:
            visit = plan.visits[line.index]
            lines.append(f"  visit: {place(visit.name, lang)} {visit.date} {visit.start or ''}  {priced(line, lang)}".rstrip())
    lines.append(f"  total: {total_text(costs, lang, plan.currency)}")
    lines.extend(f"  note: {note}" for note in plan.all_notes)
    return "\n".join(lines)


def _leg_line(leg: Leg, line: CostLine, lang: str, indent: str) -> str:
    number = f" {leg.number}" if leg.number else ""
    route = f"{place(leg.origin, lang)} {leg.depart} → {place(leg.destination, lang)} {leg.arrive}"
    return f"{indent}{leg.kind}{number}: {route}  {priced(line, lang)}".rstrip()


class StdinLines:
    """Lines from stdin, read on a daemon thread: waiting for the person to type never holds up
    Ctrl-C or the exit (a read in the event loop's executor would, until Enter)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream or sys.stdin
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._wanted = threading.Event()
        threading.Thread(target=self._run, name="console-stdin", daemon=True).start()

    def _run(self) -> None:
        while True:
            self._wanted.wait()
            self._wanted.clear()
            try:
                line = self._stream.readline()
            except (OSError, ValueError):
                line = ""
            self._loop.call_soon_threadsafe(self._queue.put_nowait, line)
            if not line:
                return

    async def readline(self) -> str:
        self._wanted.set()  # read one line only when asked: what follows stays in stdin
        return await self._queue.get()


async def run_console(
    manager: SessionManager, surface: ConsoleSurface, read_line: Callable[[], Awaitable[str]] | None = None,
    *, stop: asyncio.Event | None = None,
) -> None:
    """Read lines until EOF (Ctrl-D), /quit or `stop` (bot.py sets it on Ctrl-C and SIGTERM);
    each line goes through the inbox like any other message."""
    reader = read_line or StdinLines().readline
    stop = stop or asyncio.Event()
    surface._print("Travel planner. Type your trip request; /new, /cancel, /status, /quit. Ctrl-D or Ctrl-C exits.")
    while not stop.is_set():
        surface.out.write(PROMPT)
        surface.out.flush()
        line = await _until(reader(), stop)
        if line is None or not line:  # Ctrl-C, or Ctrl-D: the prompt line still needs its end
            surface._print("")
            return
        if line.strip() in {"/quit", "/exit"}:
            return
        if not line.strip():
            continue
        surface.turn_done.clear()
        text = line.strip()
        if text.isdigit() and not surface.options:  # asked before a restart: the store has its options
            pending = await manager.pending_question(surface.chat)
            surface.options = tuple(pending.options) if pending is not None else ()
        if text.isdigit() and 1 <= int(text) <= len(surface.options):
            text = surface.options[int(text) - 1]
        surface.options = ()
        await manager.submit(IncomingMessage(chat=surface.chat, user_id="console", text=text))
        if await _until(surface.turn_done.wait(), stop) is None:
            surface._print("")
            return


async def _until(work: Awaitable[T], stop: asyncio.Event) -> T | None:
    """`work`'s result, or None as soon as `stop` is set (the work is then cancelled)."""
    task = asyncio.ensure_future(work)
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped.cancel()
    if task.done():
        return task.result()
    task.cancel()
    return None
