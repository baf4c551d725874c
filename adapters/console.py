"""The terminal chat: `python bot.py chat` talks to the same runtime as every other surface."""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Callable
from typing import TextIO

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
from bot.chat import ChatKey, IncomingMessage, Notice, PartLog, RunInfo
from bot.sessions import SessionManager
from tools.plan import TripPlan

PROMPT = "> "


class ConsoleSurface:
    platform = "console"

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
            self._print(f"  · {event.text[:200]}")
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
            self._print(render_plan(answer.plan))
        if verdict is not None and not verdict.graded:
            self._print("[未评分：没有可核对的内容]" if run.lang == "zh" else "[not graded: nothing could be checked]")
        elif verdict is not None:
            label = verdict.label if run.lang == "zh" else verdict.label_en
            self._print(f"[{label}]")
        self.turn_done.set()

    async def post_notice(self, chat: ChatKey, notice: Notice, parts: PartLog) -> None:
        self._print(f"({notice.text})")
        if notice.kind != "queued":
            self.turn_done.set()


def render_plan(plan: TripPlan) -> str:
    lines = [f"== {plan.title} ({plan.start_date} → {plan.end_date}) =="]
    for leg in plan.legs:
        number = f" {leg.number}" if leg.number else ""
        lines.append(f"  {leg.kind}{number}: {leg.origin} {leg.depart} → {leg.destination} {leg.arrive}  ¥{leg.price:g}")
    for stay in plan.stays:
        lines.append(f"  hotel: {stay.name} {stay.checkin_date}–{stay.checkout_date} ({stay.nights} nights) ¥{stay.total:g}")
    for visit in plan.visits:
        lines.append(f"  visit: {visit.name} {visit.date} {visit.start or ''}".rstrip())
    lines.append(f"  total: ¥{plan.total_cost:g} {plan.currency}")
    lines.extend(f"  note: {note}" for note in plan.notes)
    return "\n".join(lines)


async def run_console(
    manager: SessionManager, surface: ConsoleSurface, read_line: Callable[[], str] | None = None
) -> None:
    """Read lines until EOF or /quit; each line goes through the inbox like any other message."""
    reader = read_line or sys.stdin.readline
    surface._print("Travel planner. Type your trip request; /new, /cancel, /status, /quit. Ctrl-D exits.")
    while True:
        surface.out.write(PROMPT)
        surface.out.flush()
        line = await asyncio.to_thread(reader)
        if not line or line.strip() in {"/quit", "/exit"}:
            return
        if not line.strip():
            continue
        surface.turn_done.clear()
        text = line.strip()
        if text.isdigit() and 1 <= int(text) <= len(surface.options):
            text = surface.options[int(text) - 1]
        surface.options = ()
        await manager.submit(IncomingMessage(chat=surface.chat, user_id="console", text=text))
        await surface.turn_done.wait()
