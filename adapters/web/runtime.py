"""What the web chat needs of the session runtime (bot.sessions.SessionManager fits it).

Written as protocols so the adapter states its needs in one place and depends on no more of
the manager than it uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from bot.chat import ChatKey, IncomingMessage, SubmitOutcome
from tools.plan import TripPlan


class PendingQuestionView(Protocol):
    @property
    def tool_call_id(self) -> str: ...
    @property
    def question(self) -> str: ...
    @property
    def options(self) -> tuple[str, ...]: ...
    @property
    def deadline(self) -> float | None: ...


class SessionInfoView(Protocol):
    @property
    def session_id(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def lang(self) -> str | None: ...


class HistoryEntryView(Protocol):
    @property
    def role(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def plan(self) -> TripPlan | None: ...


class SessionApi(Protocol):
    async def submit(self, msg: IncomingMessage) -> SubmitOutcome: ...
    async def pending_question(self, chat: ChatKey) -> PendingQuestionView | None: ...
    async def pending_questions(self, chat: ChatKey) -> Sequence[PendingQuestionView]: ...
    async def session_info(self, chat: ChatKey) -> SessionInfoView | None: ...
    async def history(self, chat: ChatKey) -> Sequence[HistoryEntryView]: ...
