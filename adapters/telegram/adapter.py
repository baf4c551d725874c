"""TelegramAdapter: python-telegram-bot 22 in front of the SessionManager (bot.surface.Surface).

Updates come by long polling, or by webhook when TELEGRAM_WEBHOOK_URL and
TELEGRAM_WEBHOOK_SECRET are set (then `router()` serves the URL's path on the bot's own HTTP
server). The handlers (handlers.py) only map the update and submit it: the manager stores it in
its inbox and works in its own tasks, so no handler ever waits for a run. Everything the bot
sends goes through per-chat lanes (pacing.Outbox) that keep Telegram's limits and outlast flood
waits. A conversation is a chat or one forum topic of it (places.py); what a run shows while it
works is live.py's, what it posts posting.py's (under buttons.py's buttons; a decided sign-off's
card closes, and an expired one's cards all do, signoff_cards.py); guest places (guests.py) are
answered through their guest queries.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from fastapi import APIRouter, Request, Response
from telegram import Bot, Update
from telegram.error import TelegramError
from telegram.request import HTTPXRequest

from adapters.telegram import render, texts
from adapters.telegram.bot_api import STOPPED_GENERATION
from adapters.telegram.budget import BudgetShare
from adapters.telegram.buttons import notice_buttons, plan_buttons, question_buttons
from adapters.telegram.drafts import AnswerDraft
from adapters.telegram.errors import (
    PTB_REQUEST_LOGGER,
    UNPARSED_ANSWERS,
    TelegramConfigError,
    not_the_bot_api,
)
from adapters.telegram.guests import GuestPlaces
from adapters.telegram.handlers import Manager, UpdateHandlers
from adapters.telegram.lane import Observer
from adapters.telegram.live import LiveRuns
from adapters.telegram.pacing import Outbox
from adapters.telegram.places import PLATFORM, Place
from adapters.telegram.polling import Poller
from adapters.telegram.posting import Poster
from adapters.telegram.signoff_cards import SignoffCards
from adapters.telegram.transport import Transport
from adapters.telegram.typing_indicator import TypingIndicator
from adapters.telegram.webhook_health import WebhookHealth
from agent_core.events import AnswerReady, Event, QuestionAsked, Verdict
from bot.settings import Settings
from bot.store.base import SessionLock
from bot.surface import Attachment, ChatKey, Notice, PartLog, RunInfo
from bot.texts import detect_lang

log = logging.getLogger(__name__)

# guest_message: Bot API 10.0 guest mode; stopped_message_generation: a draft's stop (Bot API 10.3)
ALLOWED_UPDATES = ["message", "edited_message", "callback_query", "guest_message", STOPPED_GENERATION]
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
_ENDING_NOTICES = {"error", "cancelled", "new"}


class TelegramAdapter:
    platform = PLATFORM
    signs_off = True  # a press carries the presser's Telegram id; the cards have buttons (bot.surface.Surface)

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
        self.cards = SignoffCards(self.poster, manager, settings.timezone)
        self.handlers = UpdateHandlers(manager, self.bot, self.guests, self.post_notice, self.cards.pressed)
        self.poller = Poller(self.bot, self.handlers.handle, timeout=poll_timeout, allowed_updates=ALLOWED_UPDATES,
                             turn=poll_turn)
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
        await self.handlers.handle(update)
        return Response(status_code=200)

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
        await self.poster.send_all(place, "question", render.question_html(question, run.lang, mention), parts,
                                   question_buttons(question, is_group, run.lang), lang=run.lang)

    async def post_answer(self, chat: ChatKey, answer: AnswerReady, verdict: Verdict | None, run: RunInfo,
                          parts: PartLog) -> None:
        place = Place.of(chat)
        self.live.pause(place)
        await self.poster.send_all(place, "answer", render.answer_html(answer, verdict, run.lang), parts,
                                   plan_buttons(answer, run.run), lang=run.lang)

    async def post_notice(self, chat: ChatKey, notice: Notice, parts: PartLog) -> None:
        place = Place.of(chat)
        if notice.kind in _ENDING_NOTICES:
            self.live.pause(place)
        if notice.kind == "decided" and notice.reply_to and notice.reply_to.isdigit() and not self.guests.holds(place):
            await self.cards.close(place, notice, parts)  # the card pressed says who decided, its buttons gone
            return
        if notice.cards and not self.guests.holds(place):
            await self.cards.expire(place, notice, parts)  # every card of the expired sign-off closes first
            return
        lang = detect_lang(notice.text)
        # a reminder replies to its question
        reply_to = int(notice.reply_to) if notice.reply_to and notice.reply_to.isdigit() else None
        await self.poster.send_all(place, "notice", render.notice_html(notice.text), parts,
                                   notice_buttons(notice, lang == "zh"), reply_to=reply_to, lang=lang)

    async def members(self, chat: ChatKey) -> frozenset[str] | None:
        return None  # the Bot API lists no group's members

    async def post_file(self, chat: ChatKey, file: Attachment, parts: PartLog) -> None:
        await self.poster.send_file(Place.of(chat), file, parts)
