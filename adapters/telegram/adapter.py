"""TelegramAdapter: python-telegram-bot 22 in front of the SessionManager (bot.surface.Surface).

Updates come by long polling, or by webhook when TELEGRAM_WEBHOOK_URL and
TELEGRAM_WEBHOOK_SECRET are set (then `router()` serves the URL's path on the bot's own HTTP
server). Handlers only map the update and submit it: the manager stores it in its inbox and
works in its own tasks, so no handler ever waits for a run. Everything the bot sends goes
through per-chat lanes (pacing.Outbox) that keep Telegram's limits and outlast flood waits.
A conversation is a chat or one forum topic of it (places.py); what a run shows while it works
is live.py's, what it posts posting.py's; guest places (guests.py) are answered through their
guest queries.
"""

from __future__ import annotations

import dataclasses
import hmac
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol
from urllib.parse import urlsplit

from fastapi import APIRouter, Request, Response
from telegram import Bot, ForceReply, InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.error import TelegramError
from telegram.request import HTTPXRequest

from adapters.telegram import render, texts
from adapters.telegram.bot_api import STOPPED_GENERATION
from adapters.telegram.budget import BudgetShare
from adapters.telegram.drafts import AnswerDraft, run_of_draft, unknown_run
from adapters.telegram.errors import (
    PTB_REQUEST_LOGGER,
    UNPARSED_ANSWERS,
    DeliveryFailed,
    TelegramConfigError,
    not_the_bot_api,
)
from adapters.telegram.guests import GuestPlaces
from adapters.telegram.lane import Observer
from adapters.telegram.live import LiveRuns
from adapters.telegram.pacing import Outbox
from adapters.telegram.places import PLATFORM, Place
from adapters.telegram.polling import Poller
from adapters.telegram.posting import Poster
from adapters.telegram.transport import Markup, Transport
from adapters.telegram.typing_indicator import TypingIndicator
from adapters.telegram.updates import (
    Mapped,
    Route,
    button_data,
    feedback_data,
    map_update,
    signoff_data,
    suggestion_data,
)
from adapters.telegram.webhook_health import WebhookHealth
from agent_core.events import AnswerReady, Event, QuestionAsked, Verdict
from bot import texts as bot_texts
from bot.delivery.bodies import UNRECORDED
from bot.run.records import PendingQuestion, SessionInfo
from bot.settings import Settings
from bot.store.base import SessionLock
from bot.surface import (
    Attachment,
    ChatKey,
    IncomingMessage,
    Notice,
    PartLog,
    RunInfo,
    SubmitOutcome,
    run_ref,
)

log = logging.getLogger(__name__)

# guest_message: Bot API 10.0 guest mode; stopped_message_generation: a draft's stop (Bot API 10.3)
ALLOWED_UPDATES = ["message", "edited_message", "callback_query", "guest_message", STOPPED_GENERATION]
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
_ENDING_NOTICES = {"error", "cancelled", "new"}


class Manager(Protocol):
    async def submit(self, msg: IncomingMessage) -> SubmitOutcome: ...

    async def pending_question(self, chat: ChatKey) -> PendingQuestion | None: ...
    async def awaits_answer_from(self, msg: IncomingMessage) -> bool: ...

    async def session_info(self, chat: ChatKey) -> SessionInfo | None: ...

    async def record_feedback(self, chat: ChatKey, run: str, user_id: str, rating: str) -> bool: ...


class TelegramAdapter:
    platform = PLATFORM

    def __init__(self, settings: Settings, manager: Manager, *, observer: Observer | None = None,
                 progress_grace: float = 1.0, progress_patience: float = 4.0, typing_interval: float = 4.0,
                 typing_delay: float = 0.5, poll_timeout: int = 10,
                 outbox: Outbox | None = None, poll_turn: SessionLock | None = None,
                 owns: Callable[[ChatKey], bool] | None = None,
                 processes: Callable[[], Awaitable[int]] | None = None) -> None:
        token = settings.telegram_bot_token
        if not token:
            raise TelegramConfigError("TELEGRAM_BOT_TOKEN", "is not set")
        url, secret = settings.telegram_webhook_url, settings.telegram_webhook_secret
        if bool(url) != bool(secret):
            raise TelegramConfigError("TELEGRAM_WEBHOOK_URL", "webhook mode needs both TELEGRAM_WEBHOOK_URL and TELEGRAM_WEBHOOK_SECRET")
        self.settings = settings
        self.manager = manager
        self.webhook_url = url or ""
        self.webhook_health = WebhookHealth(self.webhook_url, lambda: self.transport.webhook_info())
        self._secret = secret or ""
        self.progress_grace = progress_grace
        self.progress_patience = progress_patience  # progress.py: how long a change waits at most
        self.poll_timeout = poll_timeout
        # a plain Bot: updates come through our own Poller (it acknowledges an update only once
        # it is stored) or the webhook route, so python-telegram-bot's Application and Updater
        # have nothing to do here
        self.bot = Bot(
            token, base_url=settings.telegram_api_base_url,
            request=HTTPXRequest(connection_pool_size=128, pool_timeout=30, connect_timeout=10, read_timeout=30,
                                 write_timeout=30),
            # a second connection lets the final offset-confirming getUpdates run while the
            # cancelled long poll is still being torn down
            get_updates_request=HTTPXRequest(connection_pool_size=2, pool_timeout=10),
        )
        self.poller = Poller(self.bot, self.handle, timeout=poll_timeout, allowed_updates=ALLOWED_UPDATES,
                             turn=poll_turn)
        self.transport = Transport(self.bot)
        self.outbox = outbox or Outbox(observer=observer, time_scale=settings.platform_time_scale)
        # several processes on one PostgreSQL send for one bot: each takes its share (budget.py)
        self.budget = BudgetShare(self.outbox.pacer, processes) if processes is not None else None
        # bot.cluster.ownership: progress and typing stop in a chat another process took over
        self.owns: Callable[[ChatKey], bool] = owns or (lambda chat: True)
        self.typing = TypingIndicator(self.transport, typing_interval, delay=typing_delay)
        self.live = LiveRuns(self.transport, self.outbox, self.typing, grace=progress_grace, patience=progress_patience)
        self.guests = GuestPlaces(self.transport)
        self.poster = Poster(self.transport, self.outbox, self.guests)
        self._ready = False

    # -- lifecycle -----------------------------------------------------------------------------
    async def start(self) -> None:
        logging.getLogger(PTB_REQUEST_LOGGER).addFilter(UNPARSED_ANSWERS)
        try:
            await self.bot.initialize()  # getMe: fails fast on a wrong token or base URL
        except TelegramError as exc:
            if (other := not_the_bot_api(exc, self.settings.telegram_api_base_url)) is not None:
                raise other from None
            raise
        await self._register_commands()
        if self.webhook_url:
            await self.bot.set_webhook(self.webhook_url, secret_token=self._secret, allowed_updates=ALLOWED_UPDATES)
        if self.budget is not None:
            await self.budget.start()
        if not self.webhook_url:
            await self.poller.start()
        self._ready = True
        log.info("telegram adapter started as @%s (%s)", self.bot.username,
                 "webhook" if self.webhook_url else "long polling")

    async def healthy(self) -> bool:
        """Started, and still hearing updates: the poller reads them, or Telegram still delivers to
        our webhook (adapters.telegram.webhook_health)."""
        if not self._ready:
            return False
        if self.webhook_url:
            return await self.webhook_health.healthy()
        return self.poller.healthy()

    async def stop(self) -> None:
        self._ready = False
        await self.poller.stop()
        if self.budget is not None:
            await self.budget.stop()
        await self.typing.close()
        await self.outbox.close()
        await self.bot.shutdown()

    async def _register_commands(self) -> None:
        try:
            await self.bot.set_my_commands(texts.commands("en"))
            await self.bot.set_my_commands(texts.commands("zh"), language_code="zh")
        except TelegramError as exc:
            log.warning("could not register the command menu: %s", exc)

    def router(self) -> APIRouter:
        router = APIRouter()
        if self.webhook_url:
            path = urlsplit(self.webhook_url).path or "/"
            router.add_api_route(path, self._webhook, methods=["POST"], include_in_schema=False)
        return router

    async def _webhook(self, request: Request) -> Response:
        given = request.headers.get(SECRET_HEADER, "")
        if not hmac.compare_digest(given.encode(), self._secret.encode()):
            return Response(status_code=403)
        if not self._ready:
            return Response(status_code=503)  # Telegram delivers it again later
        try:
            update = Update.de_json(await request.json(), self.bot)
        except Exception:
            return Response(status_code=400)
        # handled inline so that 200 means "stored in the inbox"; a failure makes Telegram retry
        await self.handle(update)
        return Response(status_code=200)

    # -- incoming ----------------------------------------------------------------------------------
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

    # -- bot.surface.Surface ---------------------------------------------------------------------
    @property
    def drafts_seen(self) -> list[AnswerDraft]:
        """The last drafts made (benchmarks read their timings)."""
        return self.live.drafts.seen

    async def show_progress(self, chat: ChatKey, event: Event, run: RunInfo) -> None:
        place = Place.of(chat)
        if not self.guests.holds(place):  # a guest bot cannot send there: it answers its queries only
            self.live.show(place, event, run, ours=lambda: self.owns(chat))

    async def post_question(self, chat: ChatKey, question: QuestionAsked, run: RunInfo, parts: PartLog) -> None:
        place = Place.of(chat)
        self.live.pause(place)
        is_group = place.is_group
        mention = (run.user_id, run.user_name) if is_group and run.user_id.isdigit() else None
        if is_group and not run.user_id and run.user_name.startswith("@"):  # a traveller known by @username
            mention = ("", run.user_name)
        markup: Markup = None
        if question.options:
            markup = InlineKeyboardMarkup([[InlineKeyboardButton(option[:64], callback_data=button_data(i))]
                                           for i, option in enumerate(question.options[:20])])
        elif is_group:
            markup = ForceReply(selective=True, input_field_placeholder=texts.text("question_placeholder", run.lang))
        await self.poster.send_all(place, "question", render.question_html(question, run.lang, mention), parts, markup,
                                   lang=run.lang)

    async def post_answer(self, chat: ChatKey, answer: AnswerReady, verdict: Verdict | None, run: RunInfo,
                          parts: PartLog) -> None:
        place = Place.of(chat)
        self.live.pause(place)
        up, down = feedback_data("up", run.run), feedback_data("down", run.run)
        markup: Markup = None
        if answer.plan is not None and up and down:  # 👍 / 👎 under every plan, naming its run
            markup = InlineKeyboardMarkup([[InlineKeyboardButton("👍", callback_data=up),
                                            InlineKeyboardButton("👎", callback_data=down)]])
        await self.poster.send_all(place, "answer", render.answer_html(answer, verdict, run.lang), parts, markup,
                                   lang=run.lang)

    async def post_notice(self, chat: ChatKey, notice: Notice, parts: PartLog) -> None:
        place = Place.of(chat)
        if notice.kind in _ENDING_NOTICES:
            self.live.pause(place)
        markup: Markup = None
        zh = any("\u4e00" <= ch <= "\u9fff" for ch in notice.text)
        if notice.suggestion_id:  # a suggestion to confirm: Yes / No name it (only the requester's press counts)
            markup = InlineKeyboardMarkup([[
                InlineKeyboardButton("✅ 是" if zh else "✅ Yes", callback_data=suggestion_data("accept", notice.suggestion_id)),
                InlineKeyboardButton("❌ 否" if zh else "❌ No", callback_data=suggestion_data("decline", notice.suggestion_id)),
            ]])
        if notice.signoff_id:  # a sign-off request: the approvers' buttons name it
            markup = InlineKeyboardMarkup([[
                InlineKeyboardButton("✅ 批准" if zh else "✅ Approve", callback_data=signoff_data("approve", notice.signoff_id)),
                InlineKeyboardButton("❌ 驳回" if zh else "❌ Reject", callback_data=signoff_data("reject", notice.signoff_id)),
            ]])
        # a reminder replies to its question
        reply_to = int(notice.reply_to) if notice.reply_to and notice.reply_to.isdigit() else None
        await self.poster.send_all(place, "notice", render.notice_html(notice.text), parts, markup, reply_to=reply_to,
                                   lang="zh" if zh else "en")

    async def members(self, chat: ChatKey) -> frozenset[str] | None:
        return None  # the Bot API lists no group's members

    async def post_file(self, chat: ChatKey, file: Attachment, parts: PartLog) -> None:
        await self.poster.send_file(Place.of(chat), file, parts)
