"""What the surfaces ask about a chat, without changing it: the questions waiting and for whom,
its sign-off, its state and history, whether it has said anything yet, whether it is quiet.

ChatQueries is a part of bot.sessions.SessionManager (the surfaces' one handle on the runtime):
each answer is read from the store, which any process shares, plus what this process holds in
memory (the chat's actor and run, its delivery lane) for the state and for quiet.
"""

from __future__ import annotations

import asyncio
import contextlib

from bot.chat.actor_deps import state_with_run
from bot.chat.addressing import bound_question, is_for
from bot.chat.live_chats import LiveChats
from bot.delivery.outbox import DeliveryWorker
from bot.run.records import (
    HistoryEntry,
    PendingQuestion,
    SessionInfo,
    history_from_messages,
    message_from_json,
)
from bot.store.base import SignoffRow, Store
from bot.surface import ChatKey, IncomingMessage


class ChatQueries:
    # what SessionManager builds and this part reads
    store: Store
    chats: LiveChats
    outbox: DeliveryWorker
    _changed: asyncio.Event  # set whenever a chat may have become quiet

    async def pending_question(self, chat: ChatKey) -> PendingQuestion | None:
        q = await self.store.question_for_chat(str(chat))
        if q is None:
            return None
        return PendingQuestion(q.tool_call_id, q.question, q.options, q.asker_id, q.posted_message_id, q.deadline)

    async def pending_questions(self, chat: ChatKey) -> list[PendingQuestion]:
        """Every question waiting in the chat (a team trip asks several people at once), oldest first."""
        return [PendingQuestion(q.tool_call_id, q.question, q.options, q.asker_id, q.posted_message_id, q.deadline)
                for q in await self.store.questions_for_chat(str(chat))]

    async def awaits_answer_from(self, msg: IncomingMessage) -> bool:
        """Does the chat wait for this sender: a question for them (by id or @username), or the
        reason of the approver who rejected its plan?"""
        key = str(msg.chat)
        if any(q.asker_id == msg.user_id or is_for(msg, q) for q in await self.store.questions_for_chat(key)):
            return True
        signoff = await self.store.signoff_for_chat(key)
        return signoff is not None and signoff.status == "rejecting" and signoff.decided_by == msg.user_id

    async def signoff(self, chat: ChatKey) -> SignoffRow | None:
        """The chat's latest sign-off, open or decided (a surface closing its cards)."""
        return await self.store.signoff_for_chat(str(chat))

    async def known(self, chat: ChatKey) -> bool:
        """Has the chat said anything yet: a session, or a message stored and not yet handled?
        Any process answers the same once `submit` has returned (the web page may reach another
        process than the one that stored its first message)."""
        # one snapshot: the first row is finished in the transaction that starts the session
        view = await self.store.chat_view(str(chat), limit=1)
        return bool(view.rows) or view.session is not None

    async def session_info(self, chat: ChatKey) -> SessionInfo | None:
        session = await self.store.get_session(str(chat))
        if session is None:
            return None
        actor = self.chats.actor(str(chat))
        state = state_with_run(session, actor is not None and actor.run_alive)
        return SessionInfo(session.id, state, session.lang, session.run_no, session.run_steps)

    async def history(self, chat: ChatKey) -> list[HistoryEntry]:
        session = await self.store.get_session(str(chat))
        if session is None:
            return []
        return history_from_messages(await self.store.load_messages(session.id))

    async def wait_until_idle(self, chat: ChatKey, timeout: float) -> None:
        """Wait until the chat is quiet: no actor working for it, no run, nothing left to deliver,
        and nothing in its inbox but messages held for its question (tests, benchmarks)."""
        async with asyncio.timeout(timeout):
            while not await self.quiet(chat):
                self._changed.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(0.02):
                        await self._changed.wait()

    async def quiet(self, chat: ChatKey) -> bool:
        key = str(chat)
        if self.chats.busy(key) or self.outbox.busy(key) or await self.store.pending_outbox(key):
            return False
        session = await self.store.get_session(key)
        if session is not None and session.state == "working":
            return False
        pending = await self.store.inbox_for(key)
        if not pending:
            return True
        questions = await self.store.questions_for_chat(key)
        # quiet with rows left only when each is a message held for the questions (not an answer)
        return bool(questions) and all(
            row.kind == "message" and bound_question(row, message_from_json(row.body), questions, session) is None
            for row in pending
        )
