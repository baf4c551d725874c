"""What a reloaded page gets back from the session's events (adapters.web.log) beyond the stored
history (bot.run.records): the review and the files shown after each answer, and the steps and
text so far of the run working now.

The history is the conversation as stored: messages, questions, answers with their plans. A
verdict, a file link and a step are events only; without this a reload lost the review badge and
the file links of a finished plan, and mid-run lost the steps and restarted the answer being
written from the next piece on (mid-sentence). The log is the process's own (or, with PostgreSQL,
the relayed copy every process can read), so what it no longer keeps (a restart of a one-process
bot, an evicted session) is simply not replayed.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

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

if TYPE_CHECKING:
    from adapters.web.log import LoggedEvent

log = logging.getLogger(__name__)
_ENDS_RUN = {"cancelled", "new"}  # notices that end the run (adapters/web/static/app.js does the same)


@dataclass(slots=True)
class _Shown:
    """An answer event and what followed it."""

    text: str
    verdict: VerdictData | None = None
    files: list[FileData] = field(default_factory=list)


def decorate(entries: list[HistoryEntryOut], events: Sequence[LoggedEvent]) -> None:
    """Give each answer of the history the verdict and files the page showed after it. An answer
    event belongs to the latest history answer with its text (matched from the end, in order),
    so answers the log no longer keeps are left as they are."""
    shown: list[_Shown] = []
    for event in events:
        if event.event == "answer":
            shown.append(_Shown(str(json.loads(event.data).get("text", ""))))
        elif event.event == "verdict" and shown:
            shown[-1].verdict = VerdictData.model_validate_json(event.data)
        elif event.event == "file" and shown:
            shown[-1].files.append(FileData.model_validate_json(event.data))
    below = len(entries)
    for answer in reversed(shown):
        for i in range(below - 1, -1, -1):
            entry = entries[i]
            if entry.role == "assistant" and entry.text.strip() == answer.text.strip():
                entry.verdict, entry.files, below = answer.verdict, answer.files, i
                break


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
