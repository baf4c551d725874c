"""What a run shows while it works, per place (a chat, or a forum topic in it): the typing
status, the progress message with its Stop button (progress.py), and the text being written as
a draft in private chats (drafts.py) or in the progress message elsewhere.

Each place has its own progress message and draft, so two topics of one forum each show their
own run; the chat's lane (pacing.Outbox) still paces everything sent to the chat. A withdrawn
text (TextReset) leaves the draft in place for the text that replaces it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from adapters.telegram.drafts import AnswerDraft, Drafts
from adapters.telegram.pacing import Outbox
from adapters.telegram.places import Place
from adapters.telegram.progress import RunProgress
from adapters.telegram.transport import Transport
from adapters.telegram.typing_indicator import TypingIndicator
from agent_core.events import (
    Event,
    RunFinished,
    StepStarted,
    TextDelta,
    TextReset,
    Thought,
    ToolCalled,
)
from bot.surface import RunInfo


class LiveRuns:
    def __init__(self, transport: Transport, outbox: Outbox, typing: TypingIndicator, *,
                 grace: float, patience: float) -> None:
        self.transport = transport
        self.outbox = outbox
        self.typing = typing
        self.grace = grace  # a run's progress message appears only after this long
        self.patience = patience  # progress.py: how long a change waits at most
        self.drafts = Drafts(transport, self._draft_refused, time.monotonic)
        self._progress: dict[Place, RunProgress] = {}

    def show(self, place: Place, event: Event, run: RunInfo, ours: Callable[[], bool]) -> None:
        chat_id = place.chat_id
        if isinstance(event, TextDelta):
            draft = self.drafts.add(place, event, run.run)
            if draft is not None:
                self.outbox.offer_draft(chat_id, draft)
        elif isinstance(event, TextReset):
            withdrawn = self.drafts.reset(place)
            if withdrawn is not None:
                self.outbox.offer_draft(chat_id, withdrawn)
        elif isinstance(event, StepStarted):
            self.drafts.next_step(place)
        elif isinstance(event, Thought | ToolCalled | RunFinished):
            self.drafts.close(place)
        if isinstance(event, RunFinished):
            self.typing.stop(place)
            finished = self._progress.pop(place, None)
            if finished is not None:
                finished.apply(event)
                self.outbox.offer(chat_id, finished)
            return
        self.typing.start(place, ours=ours)
        tracker = self._progress.get(place)
        if tracker is None or tracker.sealed or tracker.run != run.run:  # a new run: its own message and Stop
            interval = self.outbox.group_interval if place.is_group else self.outbox.private_interval
            tracker = RunProgress(self.transport, chat_id, run.lang, run.max_steps, grace=self.grace, ours=ours,
                                  run=run.run, patience=self.patience, interval=interval, thread=place.thread)
            tracker.show_writing = not self.drafts.shown_in(place)
            self._progress[place] = tracker
            # the lane only looks for work when poked: poke it again when the grace ends
            asyncio.get_running_loop().call_later(self.grace, self.outbox.offer, chat_id, tracker)
        tracker.apply(event)
        self.outbox.offer(chat_id, tracker)
        if not isinstance(event, TextDelta):
            self._remind(chat_id, tracker)

    def pause(self, place: Place) -> None:
        """A question, an answer or an ending notice is posted: the run shows nothing more."""
        self.drafts.close(place)
        self.typing.stop(place)
        tracker = self._progress.get(place)
        if tracker is not None:
            tracker.seal()

    def _remind(self, chat_id: int, tracker: RunProgress) -> None:
        """Offer the progress again when a change it holds back becomes due (one timer a run)."""
        due_in = tracker.due_in()
        if tracker.reminder is not None or due_in is None or due_in < 0:
            return  # already timed, or nothing held, or already due (the lane has it)

        def fire() -> None:
            tracker.reminder = None
            self.outbox.offer(chat_id, tracker)
            self._remind(chat_id, tracker)  # a newer change moved the moment on

        tracker.reminder = asyncio.get_running_loop().call_later(due_in + 0.01, fire)

    def _draft_refused(self, draft: AnswerDraft) -> None:
        """No drafts in this place from now on: the progress message shows the text, as in groups."""
        tracker = self._progress.get(draft.place)
        if tracker is not None:
            tracker.show_writing = True
            self.outbox.offer(draft.chat_id, tracker)
