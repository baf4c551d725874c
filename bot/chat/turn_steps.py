"""The chat machine's turn transitions as the chat's actor (bot.chat.actor) carries them out.

START_RUN stores the person's message as a new turn; ANSWER and ANSWER_ONE store a message as a
question's answer, EXPIRE and EXPIRE_ONE a question's expiry, each as that question's tool
result. The write comes first, in one transaction with the inbox row done; only then does the
run start or resume (LiveRun.start), on the session and history as the write left them. The
machine (bot.chat.machine) has already decided that the transition is allowed: nothing here
decides who may do what.
"""

from __future__ import annotations

import uuid
from dataclasses import replace

from agent_core.schema import Message
from bot import texts
from bot.chat.actor_deps import ActorDeps
from bot.chat.live_run import LiveRun
from bot.run.records import location_to_json
from bot.run.start import resolved, resumed
from bot.store.base import InboxRow, QuestionRow, SessionRow, TurnStart
from bot.surface import ChatKey, IncomingMessage


class TurnSteps:
    def __init__(self, deps: ActorDeps, key: ChatKey, run: LiveRun) -> None:
        self.d = deps
        self.key = key
        self.skey = str(key)
        self._run = run

    async def start(self, row: InboxRow, msg: IncomingMessage, session: SessionRow | None,
                    history: list[Message] | None) -> None:
        """The turn is stored (the session, the message, its row done: one transaction), then its run starts."""
        lang = texts.detect_lang(msg.text, session.lang if session else (msg.lang or "zh"))
        new_id = "" if session else uuid.uuid4().hex  # chosen here: the run's trace is named by it
        request = msg.text.strip()[:2000]
        asker_id, asker_name = msg.user_id, msg.user_name
        if session is not None and msg.is_group and msg.user_id != session.asker_id:
            # a traveller's own legs, a thanks, an accepted suggestion: the trip stays the
            # requester's (only an accepted suggestion changes what was asked)
            asker_id, asker_name = session.asker_id, session.asker_name
            request = request if msg.adopted_by else session.request
        trip = self.d.driver.trips.new_trip(self.key, session.id if session else new_id,
                                            session.run_no + 1 if session else 1, request)
        turn = TurnStart(
            chat_key=self.skey, inbox_id=row.id, message=Message.user(msg.text.strip(), sender=msg.sender), lang=lang,
            asker_id=asker_id, asker_name=asker_name, request=request,
            location=location_to_json(msg.location), new_session_id=new_id, trace_parent=trip,
        )
        if session is not None and history is None:  # read before the write, which adds the message
            history = await self.d.store.load_messages(session.id)
        stored = await self.d.store.start_turn(turn)
        self._run.start(stored, [*(history or []), turn.message])

    async def answer(self, row: InboxRow, msg: IncomingMessage, session: SessionRow, question: QuestionRow,
                     history: list[Message] | None, *, resume: bool) -> None:
        """The message is the question's answer, stored as its tool result (a shared location
        is remembered as well)."""
        content = msg.text.strip()
        if msg.location is not None:
            loc = f"(shared location: {msg.location.latitude:.5f}, {msg.location.longitude:.5f})"
            content = f"{content} {loc}".strip()
            location = location_to_json(msg.location) or ""
            await self.d.store.remember_location(self.skey, location, session.lang)
            session = replace(session, location=location)
        answer = Message.tool(content, tool_call_id=question.tool_call_id, name="ask_human")
        answer.sender = msg.sender  # in a group, the model reads who answered
        if resume:  # the last question waiting: the run goes on
            await self._resume(session, answer, "answered", row, history)
        else:
            await resolved(self.d.store, session.id, answer, "answered", row.id)

    async def expire(self, row: InboxRow, session: SessionRow, question: QuestionRow,
                     history: list[Message] | None, *, resume: bool) -> None:
        """The question's deadline passed unanswered: its tool result says so."""
        hours = round(self.d.settings.human_timeout_s / 3600, 2)
        answer = Message.tool(texts.NO_ANSWER.format(hours=hours), tool_call_id=question.tool_call_id, name="ask_human")
        if resume:  # the last question: the run goes on
            await self._resume(session, answer, "expired", row, history)
        else:
            await resolved(self.d.store, session.id, answer, "expired", row.id)

    async def _resume(self, session: SessionRow, answer: Message, status: str, row: InboxRow,
                      history: list[Message] | None) -> None:
        """The question's answer (or its expiry) is stored as its tool result, then the run goes on."""
        if history is None:  # read before the write, which adds the answer
            history = await self.d.store.load_messages(session.id)
        await resolved(self.d.store, session.id, answer, status, row.id)
        self._run.start(resumed(session), [*history, answer])
