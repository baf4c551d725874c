"""What a reloaded page gets back beyond the stored history (bot.run.records): the review, the
files and the 👍 / 👎 shown with each answer, and the steps and text so far of the run working
now.

The history is the conversation as stored: messages, questions, answers with their plans. A
verdict and a file link are what the session's outbox delivered (Store.sent_outbox: the answer
row's body holds its verdict and its run, a file row its file), so a reload shows them after a
restart too; the session's event log (adapters.web.log) fills in what was shown a moment ago and
is not yet recorded as delivered. A rating already given is the store's (Store.session_feedback).
The steps and the text being written are events only: the process's own log (or, with
PostgreSQL, the relayed copy every process can read), so mid-run a reload lost neither the steps
nor the answer's start; what the log no longer keeps (a restart, an evicted session) is simply
not replayed.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, cast

from adapters.web.payloads import (
    DeltaData,
    FileData,
    HistoryEntryOut,
    ProgressOut,
    StepData,
    TextResetData,
    ToolData,
    VerdictData,
)
from adapters.web.render import file_url, verdict_data
from bot.delivery.bodies import answer_from_body, audience_of
from bot.delivery.plan_files import file_from_body
from bot.store.rows import FeedbackRow, OutboxRow
from bot.surface import run_ref

if TYPE_CHECKING:
    from adapters.web.log import LoggedEvent

log = logging.getLogger(__name__)
_ENDS_RUN = {"cancelled", "new"}  # notices that end the run (adapters/web/static/app.js does the same)
Rating = Literal["up", "down"]


@dataclass(slots=True)
class Shown:
    """An answer as the page showed it, and what followed it."""

    text: str
    verdict: VerdictData | None = None
    files: list[FileData] = field(default_factory=list)
    run: str | None = None  # the run its 👍 / 👎 rate (a plan's answer only)


def shown_in_outbox(rows: Sequence[OutboxRow], session_id: str) -> list[Shown]:
    """The answers the session delivered, each with its verdict and the files after it."""
    shown: list[Shown] = []
    for row in rows:
        if row.kind == "answer":
            answer, verdict = answer_from_body(row.body)
            run = audience_of(row.body)[0].run if answer.plan is not None else ""
            shown.append(Shown(answer.text, None if verdict is None else verdict_data(verdict).model_copy(
                update={"ts": row.created_at}), run=run or None))
        elif row.kind == "file" and shown:
            file = file_from_body(row.body)
            shown[-1].files.append(FileData(filename=file.filename, title=file.title, ts=row.created_at,
                                            url=file_url(session_id, file.filename)))
    return shown


def shown_in_log(events: Sequence[LoggedEvent]) -> list[Shown]:
    """The answers among the session's events, each with the verdict and files that followed."""
    shown: list[Shown] = []
    for event in events:
        if event.event == "answer":
            data = json.loads(event.data)
            shown.append(Shown(str(data.get("text", "")), run=data.get("run") or None))
        elif event.event == "verdict" and shown:
            shown[-1].verdict = VerdictData.model_validate_json(event.data)
        elif event.event == "file" and shown:
            shown[-1].files.append(FileData.model_validate_json(event.data))
    return shown


def decorate(entries: list[HistoryEntryOut], shown: Sequence[Shown]) -> None:
    """Give each answer of the history what the page showed with it, where it has none yet. A
    shown answer belongs to the latest history answer with its text (matched from the end, in
    order), so answers a source no longer holds are left as they are."""
    below = len(entries)
    for answer in reversed(shown):
        for i in range(below - 1, -1, -1):
            entry = entries[i]
            if entry.role == "assistant" and entry.text.strip() == answer.text.strip():
                entry.verdict = entry.verdict or answer.verdict
                entry.files = entry.files or answer.files
                if entry.plan is not None:
                    entry.run = entry.run or answer.run
                below = i
                break


def rate(entries: list[HistoryEntryOut], feedback: Sequence[FeedbackRow], user_id: str) -> None:
    """Show the person's own rating, already given, on each answer they can rate."""
    given: Mapping[str, str] = {run_ref(f.session_id, f.run_no): f.rating for f in feedback if f.user_id == user_id}
    for entry in entries:
        if entry.run is not None and given.get(entry.run) in ("up", "down"):
            entry.rating = cast(Rating, given[entry.run])


class Segment:
    """The run segment going on (since the last answer, question, end of a run, error or Stop),
    as the page draws it: its steps and tool calls, and the text being written with the deltas of
    a step merged, so it is whole however many pieces it came in (the log keeps only its last
    events)."""

    def __init__(self) -> None:
        self.events: list[ProgressOut] = []

    def add(self, event: str, data: str) -> None:
        try:
            self._add(event, data)
        except ValueError:  # not an event the page draws as progress (pydantic's errors are ValueErrors)
            log.warning("a %s event the reload cannot replay: %.200s", event, data)

    def _add(self, event: str, data: str) -> None:
        if event == "delta":
            delta = DeltaData.model_validate_json(data)
            last = self.events[-1].data if self.events else None
            if isinstance(last, DeltaData) and last.step == delta.step:
                last.text += delta.text
            else:
                self.events.append(ProgressOut(event="delta", data=delta))
        elif event == "text_reset":  # withdrawn: a reload shows none of it (what replaces it comes later)
            step = TextResetData.model_validate_json(data).step
            self.events = [e for e in self.events if not (isinstance(e.data, DeltaData) and e.data.step == step)]
        elif event == "step":
            self.events.append(ProgressOut(event="step", data=StepData.model_validate_json(data)))
        elif event == "tool":
            self.events.append(ProgressOut(event="tool", data=ToolData.model_validate_json(data)))
        elif event != "notice" or json.loads(data).get("kind") in _ENDS_RUN:
            self.events = []

    def progress(self) -> list[ProgressOut]:
        return [event.model_copy(deep=True) for event in self.events]
