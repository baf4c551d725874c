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

An answer can be in the history before it is delivered (its outbox row is written with it, and
delivered a moment later): the view draws it then from the row not yet delivered, with its
review and files, and names what it drew (`drawn_keys`: the answer by the run it ends, a file by
its link's `v`), so the event stream the page opens next skips those events (`drawn_event`)
when the delivery brings them. Each answer shows once, whenever the reload happens.
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
from adapters.web.render import file_key_of, file_url, verdict_data
from bot.delivery.bodies import answer_from_body, audience_of
from bot.delivery.plan_files import file_from_body
from bot.store.rows import FeedbackRow, OutboxRow
from bot.surface import run_ref

if TYPE_CHECKING:
    from adapters.web.log import LoggedEvent

log = logging.getLogger(__name__)
_ENDS_RUN = {"cancelled", "new"}  # notices that end the run (adapters/web/static/app.js does the same)
Rating = Literal["up", "down"]
DRAWN_RECENT = 8  # the newest answers a view names as drawn, besides those not yet delivered


@dataclass(slots=True)
class Shown:
    """An answer as the page showed it, and what followed it."""

    text: str
    verdict: VerdictData | None = None
    files: list[FileData] = field(default_factory=list)
    run: str | None = None  # the run its 👍 / 👎 rate (a plan's answer only)
    key: str | None = None  # the run it ends, any answer: its answer and verdict events name it
    pending: bool = False  # its outbox row was not yet delivered when the view read it


def shown_in_outbox(rows: Sequence[OutboxRow], session_id: str) -> list[Shown]:
    """The answers the session delivered (or is about to), each with its verdict and the files after it."""
    shown: list[Shown] = []
    for row in rows:
        if row.kind == "answer":
            answer, verdict = answer_from_body(row.body)
            key = audience_of(row.body)[0].run or None
            shown.append(Shown(answer.text, None if verdict is None else verdict_data(verdict).model_copy(
                update={"ts": row.created_at}), run=key if answer.plan is not None else None, key=key,
                pending=row.status == "pending"))
        elif row.kind == "file" and shown:
            file = file_from_body(row.body)
            shown[-1].files.append(FileData(filename=file.filename, title=file.title, ts=row.created_at,
                                            url=file_url(session_id, file.filename, file.content)))
    return shown


def shown_in_log(events: Sequence[LoggedEvent]) -> list[Shown]:
    """The answers among the session's events, each with the verdict and files that followed."""
    shown: list[Shown] = []
    for event in events:
        if event.event == "answer":
            data = json.loads(event.data)
            key = data.get("run") or None
            shown.append(Shown(str(data.get("text", "")), run=key if data.get("plan") else None, key=key))
        elif event.event == "verdict" and shown:
            shown[-1].verdict = VerdictData.model_validate_json(event.data)
        elif event.event == "file" and shown:
            shown[-1].files.append(FileData.model_validate_json(event.data))
    return shown


def decorate(entries: list[HistoryEntryOut], shown: Sequence[Shown]) -> list[Shown]:
    """Give each answer of the history what the page showed with it, where it has none yet. A
    shown answer belongs to the latest history answer with its text (matched from the end, in
    order), so answers a source no longer holds are left as they are. The shown answers that
    found their entry, in order."""
    below = len(entries)
    found: list[Shown] = []
    for answer in reversed(shown):
        for i in range(below - 1, -1, -1):
            entry = entries[i]
            if entry.role == "assistant" and entry.text.strip() == answer.text.strip():
                entry.verdict = entry.verdict or answer.verdict
                entry.files = entry.files or answer.files
                if entry.plan is not None:
                    entry.run = entry.run or answer.run
                below = i
                found.append(answer)
                break
    return found[::-1]


def drawn_keys(drawn: Sequence[Shown]) -> list[str]:
    """What a view drew from the outbox that the event stream may still bring: its answers (and
    their reviews) by the run they end, its files by their link's `v`: those not yet delivered,
    and the newest few (delivered while the view was read). A chat delivers in order, so older
    ones were delivered before those, before the view's events, which the stream never repeats."""
    keys: list[str] = []
    for i, answer in enumerate(drawn):
        if answer.pending or i >= len(drawn) - DRAWN_RECENT:
            keys += [k for k in (answer.key, *(file_key_of(f.url) for f in answer.files)) if k]
    return keys


def drawn_event(event: str, data: str, drawn: frozenset[str]) -> bool:
    """Is this an event the page drew from the session view (`drawn_keys`)? Then the stream skips it."""
    if not drawn or event not in ("answer", "verdict", "file"):
        return False
    payload = json.loads(data)
    key = file_key_of(str(payload.get("url") or "")) if event == "file" else payload.get("run")
    return bool(key) and key in drawn


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
