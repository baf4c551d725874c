"""The answer as it is written, shown as a Telegram draft (`sendMessageDraft`, private chats and
their topics).

A draft is a preview only: Telegram shows it for a while and drops it, and the answer is then
sent as real messages (the outbox row). So a draft that fails costs nothing but the preview.
`AnswerDraft` is a lane.ProgressSource on the chat's draft lane: however many pieces arrive
during a wait, one request carries the latest text. When Telegram refuses drafts in a chat
(`BadRequest`, `Forbidden`), `on_refused` is told once and the adapter shows the text in the
edited progress message instead, as in groups.

Every draft of a run has the same id (`draft_id`), so the person sees one draft: a withdrawn
text (TextReset) turns it into Telegram's "Thinking…" placeholder (an empty text, Bot API 10.0),
and the text that replaces it continues the same draft. The id also names the run: a press of
the draft's stop button (Bot API 10.3) says which run it meant (`run_of_draft`).
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Callable

from telegram.error import BadRequest, Forbidden

from adapters.telegram.bot_api import DraftStop
from adapters.telegram.places import Place
from adapters.telegram.transport import Transport
from agent_core.events import TextDelta
from bot.surface import run_ref

log = logging.getLogger(__name__)

DRAFT_LIMIT = 4096  # characters of one draft, as of one message
_RUN_BITS = 16  # draft ids are positive 31-bit numbers: 15 bits of the session, 16 of the run number


def draft_id(run: str) -> int:
    """The drafts' id of a run ("<session id>.<run number>", bot.surface.run_ref): never 0."""
    session, _, number = run.rpartition(".")
    n = int(number) if number.isdigit() else 0
    return (_session_bits(session) << _RUN_BITS | (n & 0xFFFF)) or 1


def run_of_draft(draft: int, session_id: str, run_no: int) -> str | None:
    """The run of conversation `session_id` (now at run `run_no`) whose drafts carry `draft`;
    None when they are no run of it (another, earlier conversation's)."""
    if draft >> _RUN_BITS != _session_bits(session_id):
        return None
    number = run_no - ((run_no - (draft & 0xFFFF)) % (1 << _RUN_BITS))
    return run_ref(session_id, number) if number >= 1 else None


def unknown_run(draft: int) -> str:
    """A run reference for a draft whose run is not known: it names no run, so a Stop naming it
    stops nothing and the chat says the run has ended (bot.chat.machine)."""
    return f"draft-{draft}.0"


def _session_bits(session_id: str) -> int:
    return zlib.crc32(session_id.encode()) & 0x7FFF


class AnswerDraft:
    def __init__(self, transport: Transport, place: Place, draft: int, on_refused: Callable[[AnswerDraft], None],
                 clock: Callable[[], float], stop: DraftStop | None = None) -> None:
        self.transport = transport
        self.place = place
        self.chat_id = place.chat_id
        self.draft_id = draft  # non-zero; the run's (draft_id)
        self.stop = stop  # the stop button while the run works
        self.step = 0
        self.text = ""
        self.sent = ""
        self.refused = False
        self.closed = False
        self.carried = False  # withdrawn (TextReset): the next step's text continues this draft
        self._on_refused = on_refused
        self._clock = clock
        self.first_piece_at: float | None = None  # when the first text arrived, and was shown
        self.first_shown_at: float | None = None

    def add(self, piece: str) -> None:
        if self.first_piece_at is None:
            self.first_piece_at = self._clock()
        self.text += piece

    def reset(self) -> None:
        """The text is withdrawn: the draft shows the placeholder until the text that replaces it."""
        self.text, self.carried = "", True

    def close(self) -> None:
        """The step's text is complete (an answer, a thought or a stop follows): no more drafts."""
        self.closed = True

    def view(self) -> str:
        text = self.text.strip()
        return text if len(text) <= DRAFT_LIMIT else "…" + text[-(DRAFT_LIMIT - 1):]

    # -- lane.ProgressSource ----------------------------------------------------------------
    def has_work(self) -> bool:
        view = self.view()
        return not (self.refused or self.closed) and view != self.sent and bool(view or self.sent)

    async def flush(self) -> bool:
        if not self.has_work():
            return False
        text = self.view()
        try:
            await self.transport.draft(self.chat_id, self.draft_id, text, thread=self.place.thread, stop=self.stop)
        except (BadRequest, Forbidden) as exc:
            log.info("telegram refused a draft in chat %s (%s): progress edits show the text", self.place, exc)
            self.refused = True
            self._on_refused(self)
            return True
        if self.first_shown_at is None and text:
            self.first_shown_at = self._clock()
        self.sent = text
        return True


class Drafts:
    """The draft of each place's run: one a place, carried across a withdrawn text."""

    def __init__(self, transport: Transport, on_refused: Callable[[AnswerDraft], None],
                 clock: Callable[[], float]) -> None:
        self.transport = transport
        self._on_refused = on_refused
        self._clock = clock
        self._current: dict[Place, AnswerDraft] = {}
        self._no_drafts: set[Place] = set()  # private chats (topics) where Telegram refused a draft
        self.seen: list[AnswerDraft] = []  # the last drafts made (benchmarks read their timings)

    def shown_in(self, place: Place) -> bool:
        """Is the text written shown as a draft here (private chats, unless Telegram refused)?"""
        return not place.is_group and place not in self._no_drafts

    def add(self, place: Place, event: TextDelta, run: str) -> AnswerDraft | None:
        """More text of the step; the draft to offer to the chat's draft lane (None: no drafts here)."""
        if not self.shown_in(place):
            return None
        draft = self._current.get(place)
        if draft is not None and draft.carried and not draft.closed:
            draft.step, draft.carried = event.step, False  # the text that replaces the withdrawn one
        if draft is None or draft.step != event.step or draft.closed:
            draft = AnswerDraft(self.transport, place, draft_id(run), self._refused, self._clock, stop=DraftStop())
            draft.step = event.step
            self._current[place] = draft
            self.seen = [*self.seen[-999:], draft]
        draft.add(event.text)
        return draft

    def reset(self, place: Place) -> AnswerDraft | None:
        """The text is withdrawn; the draft to offer (it shows the placeholder), if there is one."""
        draft = self._current.get(place)
        if draft is None or draft.closed:
            return None
        draft.reset()
        return draft

    def next_step(self, place: Place) -> None:
        """A new step: its text is a new draft, unless the last one was withdrawn (it continues)."""
        draft = self._current.get(place)
        if draft is not None and not draft.carried:
            self.close(place)

    def close(self, place: Place) -> None:
        draft = self._current.pop(place, None)
        if draft is not None:
            draft.close()

    def _refused(self, draft: AnswerDraft) -> None:
        self._no_drafts.add(draft.place)
        self._on_refused(draft)
