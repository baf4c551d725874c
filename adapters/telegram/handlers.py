"""What the Telegram surface does with each update the poller or the webhook hands it.

Each update is mapped first (updates.py), then only submitted to the SessionManager, which
stores it in the chat's inbox and works in its own tasks: no handler ever waits for a run.
Button presses also answer their callback query (the toast Telegram shows the presser). A
guest message (guests.py) opens a query to answer there; in groups the bot takes only what
addresses it, and the next message of the person its question waits for.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

from telegram import Bot, Update
from telegram.error import TelegramError

from adapters.telegram import texts
from adapters.telegram.drafts import run_of_draft, unknown_run
from adapters.telegram.errors import DeliveryFailed
from adapters.telegram.guests import GuestPlaces
from adapters.telegram.places import Place
from adapters.telegram.updates import Mapped, Route, map_update
from bot import texts as bot_texts
from bot.delivery.bodies import UNRECORDED
from bot.run.records import PendingQuestion, SessionInfo
from bot.store.rows import SignoffRow
from bot.surface import ChatKey, IncomingMessage, Notice, PartLog, SubmitOutcome, run_ref

log = logging.getLogger(__name__)

PostNotice = Callable[[ChatKey, Notice, PartLog], Awaitable[None]]
CardPressed = Callable[[Place, IncomingMessage, str], Awaitable[None]]


class Manager(Protocol):
    async def submit(self, msg: IncomingMessage) -> SubmitOutcome: ...

    async def pending_question(self, chat: ChatKey) -> PendingQuestion | None: ...
    async def awaits_answer_from(self, msg: IncomingMessage) -> bool: ...

    async def session_info(self, chat: ChatKey) -> SessionInfo | None: ...

    async def record_feedback(self, chat: ChatKey, run: str, user_id: str, rating: str) -> bool: ...

    async def signoff(self, chat: ChatKey) -> SignoffRow | None: ...  # a decided card closes (signoff_cards.py)


class UpdateHandlers:
    def __init__(self, manager: Manager, bot: Bot, guests: GuestPlaces, post_notice: PostNotice,
                 card_pressed: CardPressed) -> None:
        self.manager = manager
        self.bot = bot
        self.guests = guests
        self.post_notice = post_notice  # the adapter's: a note on media the bot cannot read
        self.card_pressed = card_pressed  # signoff_cards.py: a card whose sign-off is over closes

    async def handle(self, update: Update) -> None:
        mapped = map_update(update, bot_id=self.bot.id, bot_username=self.bot.username)
        if mapped.route is Route.SUBMIT and mapped.message is not None:
            self._note_guest(mapped)
            if await self._wanted(mapped, mapped.message):
                await self.manager.submit(mapped.message)
        elif mapped.route is Route.BUTTON:
            await self._button(mapped)
        elif mapped.route is Route.STOP and mapped.message is not None:
            # the chat's own task decides, and a notice says what was stopped (or why not); the
            # toast says "Stopping…" only to a press that looks meant for the run working now
            info = await self.manager.session_info(mapped.message.chat)
            working = info is not None and info.state == "working" and (
                not mapped.message.run or mapped.message.run == run_ref(info.session_id, info.run_no))
            outcome = await self.manager.submit(mapped.message)
            note = texts.text("stop_pressed", mapped.lang) if outcome is SubmitOutcome.ACCEPTED and working else ""
            await self._answer_query(mapped.callback_id, note)
        elif mapped.route is Route.DRAFT_STOP:
            await self._draft_stop(mapped, update.update_id)
        elif mapped.route is Route.DECISION and mapped.message is not None:
            if mapped.message.text in ("approve", "reject") and not self.guests.holds(mapped.place):
                await self.card_pressed(mapped.place, mapped.message, mapped.lang)
            await self.manager.submit(mapped.message)  # the chat says what became of it
            await self._answer_query(mapped.callback_id, "")
        elif mapped.route is Route.FEEDBACK and mapped.message is not None:
            press = mapped.message
            kept = await self.manager.record_feedback(press.chat, press.run or "", press.user_id, press.text)
            await self._answer_query(mapped.callback_id, texts.text("feedback_thanks" if kept else "feedback_unknown",
                                                                    mapped.lang))
        elif mapped.route is Route.BAD_BUTTON:
            await self._answer_query(mapped.callback_id, texts.text("button_junk", mapped.lang))
        elif mapped.route is Route.MEDIA and mapped.addressed:
            self._note_guest(mapped)
            await self._media(mapped)
        else:
            log.debug("ignored Telegram update %s: %s", update.update_id, mapped.reason or mapped.route)

    def _note_guest(self, mapped: Mapped) -> None:
        """A guest message opens a query to answer there; an ordinary one says the bot is a member."""
        if mapped.guest_query:
            self.guests.summoned(mapped.place, mapped.guest_query)
        elif self.guests.holds(mapped.place):
            self.guests.joined(mapped.place)

    async def _wanted(self, mapped: Mapped, msg: IncomingMessage) -> bool:
        """In groups the bot takes commands, mentions and replies to it, and otherwise only the
        next message of the person its question waits for."""
        if not msg.is_group or mapped.addressed:
            return True
        return await self.manager.awaits_answer_from(msg)

    async def _draft_stop(self, mapped: Mapped, update_id: int) -> None:
        """The stop button of a draft: the chat's Stop of the run the draft belongs to (its id
        names it); the chat's task decides whether it still works, and says so."""
        stopped = mapped.stopped
        assert stopped is not None
        if stopped.chat.type != "private":  # drafts exist in private chats only
            log.info("telegram: a draft stop from a %s chat %s is ignored", stopped.chat.type, mapped.place)
            return
        place = mapped.place
        info = await self.manager.session_info(place.key)
        run = run_of_draft(stopped.draft_id, info.session_id, info.run_no) if info is not None else None
        if run is None:
            log.info("telegram: draft %s in %s is no run of its conversation now: its stop changes nothing",
                     stopped.draft_id, place)
        await self.manager.submit(IncomingMessage(
            chat=place.key, user_id=str(place.chat_id), text="/stop", dedup_id=str(update_id),
            run=run or unknown_run(stopped.draft_id)))

    async def _button(self, mapped: Mapped) -> None:
        assert mapped.message is not None and mapped.option_index is not None
        msg = mapped.message
        pending = await self.manager.pending_question(msg.chat)
        # The question's id is stored just after it is sent: a very quick press may come first.
        if (pending is None or pending.posted_message_id not in (None, msg.reply_to)
                or mapped.option_index >= len(pending.options)):
            await self._answer_query(mapped.callback_id, texts.text("button_stale", mapped.lang))
            return
        option = pending.options[mapped.option_index]
        outcome = await self.manager.submit(dataclasses.replace(msg, text=option))
        note = texts.text("button_chosen", mapped.lang, option=option) if outcome is SubmitOutcome.ACCEPTED else ""
        await self._answer_query(mapped.callback_id, note[:200])

    async def _answer_query(self, query_id: str | None, note: str) -> None:
        if not query_id:
            return
        try:
            await self.bot.answer_callback_query(query_id, text=note or None)
        except TelegramError as exc:
            log.info("could not answer callback query %s: %s", query_id, exc)

    async def _media(self, mapped: Mapped) -> None:
        info = await self.manager.session_info(mapped.place.key)
        lang = info.lang if info is not None else mapped.lang
        try:  # a reply to a message the bot does not read: best effort, not an outbox row
            await self.post_notice(mapped.place.key, Notice("invalid", bot_texts.text("unsupported", lang)), UNRECORDED)
        except DeliveryFailed as exc:
            log.warning("%s", exc)
