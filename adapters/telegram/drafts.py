"""The answer as it is written, shown as a Telegram draft (`sendMessageDraft`, private chats).

A draft is a preview only: Telegram shows it for a while and drops it, and the answer is then
sent as real messages (the outbox row). So a draft that fails costs nothing but the preview.
`AnswerDraft` is a pacing.ProgressSource on the chat's draft lane: however many pieces arrive
during a wait, one request carries the latest text. When Telegram refuses drafts in a chat
(`BadRequest`, `Forbidden`), `on_refused` is told once and the adapter shows the text in the
edited progress message instead, as in groups.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from telegram.error import BadRequest, Forbidden

from adapters.telegram.transport import Transport

log = logging.getLogger(__name__)

DRAFT_LIMIT = 4096  # characters of one draft, as of one message


class AnswerDraft:
    def __init__(self, transport: Transport, chat_id: int, draft_id: int, on_refused: Callable[[AnswerDraft], None],
                 clock: Callable[[], float]) -> None:
        self.transport = transport
        self.chat_id = chat_id
        self.draft_id = draft_id  # non-zero; one per step's text, so a new step starts a new draft
        self.text = ""
        self.sent = ""
        self.refused = False
        self.closed = False
        self._on_refused = on_refused
        self._clock = clock
        self.first_piece_at: float | None = None  # when the first text arrived, and was shown
        self.first_shown_at: float | None = None

    def add(self, piece: str) -> None:
        if self.first_piece_at is None:
            self.first_piece_at = self._clock()
        self.text += piece

    def close(self) -> None:
        """The step's text is complete (an answer, a thought or a stop follows): no more drafts."""
        self.closed = True

    def view(self) -> str:
        text = self.text.strip()
        return text if len(text) <= DRAFT_LIMIT else "…" + text[-(DRAFT_LIMIT - 1):]

    # -- pacing.ProgressSource ----------------------------------------------------------------
    def has_work(self) -> bool:
        return not (self.refused or self.closed) and bool(self.view()) and self.view() != self.sent

    async def flush(self) -> bool:
        if not self.has_work():
            return False
        text = self.view()
        try:
            await self.transport.draft(self.chat_id, self.draft_id, text)
        except (BadRequest, Forbidden) as exc:
            log.info("telegram refused a draft in chat %s (%s): progress edits show the text", self.chat_id, exc)
            self.refused = True
            self._on_refused(self)
            return True
        if self.first_shown_at is None:
            self.first_shown_at = self._clock()
        self.sent = text
        return True
