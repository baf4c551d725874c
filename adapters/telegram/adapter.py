"""TelegramAdapter: python-telegram-bot 22 in front of the SessionManager (bot.surface.Surface).

Updates come by long polling, or by webhook when TELEGRAM_WEBHOOK_URL and
TELEGRAM_WEBHOOK_SECRET are set (then `router()` serves the URL's path on the bot's own HTTP
server). Handlers only map the update and submit it: the manager stores it in its inbox and
works in its own tasks, so no handler ever waits for a run. Everything the bot sends goes
through per-chat lanes (pacing.Outbox) that keep Telegram's limits and outlast flood waits.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import hmac
import itertools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol
from urllib.parse import urlsplit

from fastapi import APIRouter, Request, Response
from telegram import ForceReply, InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.error import (
    BadRequest,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TelegramError,
)
from telegram.ext import Application

from adapters.telegram import render, texts
from adapters.telegram.budget import BudgetShare
from adapters.telegram.drafts import AnswerDraft
from adapters.telegram.errors import (
    PTB_REQUEST_LOGGER,
    UNPARSED_ANSWERS,
    AdapterStopped,
    DeliveryFailed,
    TelegramConfigError,
    not_the_bot_api,
)
from adapters.telegram.pacing import Observer, Outbox, retry_seconds
from adapters.telegram.polling import Poller
from adapters.telegram.progress import RunProgress
from adapters.telegram.split import split_html
from adapters.telegram.transport import Markup, Transport
from adapters.telegram.typing_indicator import TypingIndicator
from adapters.telegram.updates import (
    PLATFORM,
    Mapped,
    Route,
    button_data,
    feedback_data,
    map_update,
    signoff_data,
    suggestion_data,
)
from adapters.telegram.webhook_health import WebhookHealth
from agent_core.events import (
    AnswerReady,
    Event,
    QuestionAsked,
    RunFinished,
    StepStarted,
    TextDelta,
    Thought,
    ToolCalled,
    Verdict,
)
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

ALLOWED_UPDATES = ["message", "edited_message", "callback_query"]
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
        builder = (Application.builder().token(token).base_url(settings.telegram_api_base_url)
                   .connection_pool_size(128).pool_timeout(30).connect_timeout(10).read_timeout(30)
                   .write_timeout(30)
                   # a second connection lets the final offset-confirming getUpdates run while
                   # the cancelled long poll is still being torn down
                   .get_updates_connection_pool_size(2).get_updates_pool_timeout(10)
                   # our own Poller acknowledges updates only once they are stored
                   .updater(None))
        self.app = builder.build()
        self.poller = Poller(self.app.bot, self.handle, timeout=poll_timeout, allowed_updates=ALLOWED_UPDATES,
                             turn=poll_turn)
        self.transport = Transport(self.app.bot)
        self.outbox = outbox or Outbox(observer=observer)
        # several processes on one PostgreSQL send for one bot: each takes its share (budget.py)
        self.budget = BudgetShare(self.outbox.pacer, processes) if processes is not None else None
        # bot.cluster.ownership: progress and typing stop in a chat another process took over
        self.owns: Callable[[ChatKey], bool] = owns or (lambda chat: True)
        self.typing = TypingIndicator(self.transport, typing_interval, delay=typing_delay)
        self._progress: dict[int, RunProgress] = {}
        self._drafts: dict[int, tuple[int, AnswerDraft]] = {}  # chat -> (step, its draft)
        self._draft_ids = itertools.count(1)  # never 0: Telegram refuses a zero draft_id
        self._no_drafts: set[int] = set()  # private chats where Telegram refused a draft
        self.drafts_seen: list[AnswerDraft] = []  # the last drafts made (benchmarks read their timings)
        self._ready = False

    # -- lifecycle -----------------------------------------------------------------------------
    async def start(self) -> None:
        logging.getLogger(PTB_REQUEST_LOGGER).addFilter(UNPARSED_ANSWERS)
        try:
            await self.app.initialize()  # getMe: fails fast on a wrong token or base URL
        except TelegramError as exc:
            if (other := not_the_bot_api(exc, self.settings.telegram_api_base_url)) is not None:
                raise other from None
            raise
        await self._register_commands()
        if self.webhook_url:
            await self.app.bot.set_webhook(self.webhook_url, secret_token=self._secret,
                                           allowed_updates=ALLOWED_UPDATES)
        await self.app.start()
        if self.budget is not None:
            await self.budget.start()
        if not self.webhook_url:
            await self.poller.start()
        self._ready = True
        log.info("telegram adapter started as @%s (%s)", self.app.bot.username,
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
        if self.app.running:
            await self.app.stop()
        await self.typing.close()
        await self.outbox.close()
        await self.app.shutdown()

    async def _register_commands(self) -> None:
        try:
            await self.app.bot.set_my_commands(texts.commands("en"))
            await self.app.bot.set_my_commands(texts.commands("zh"), language_code="zh")
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
            update = Update.de_json(await request.json(), self.app.bot)
        except Exception:
            return Response(status_code=400)
        # handled inline so that 200 means "stored in the inbox"; a failure makes Telegram retry
        await self.handle(update)
        return Response(status_code=200)

    # -- incoming ----------------------------------------------------------------------------------
    async def handle(self, update: Update) -> None:
        mapped = map_update(update, bot_id=self.app.bot.id, bot_username=self.app.bot.username)
        if mapped.route is Route.SUBMIT and mapped.message is not None:
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
            await self._media(mapped)
        else:
            log.debug("ignored Telegram update %s: %s", update.update_id, mapped.reason or mapped.route)

    async def _wanted(self, mapped: Mapped, msg: IncomingMessage) -> bool:
        """In groups the bot takes commands, mentions and replies to it, and otherwise only the
        next message of the person its question waits for."""
        if not msg.is_group or mapped.addressed:
            return True
        return await self.manager.awaits_answer_from(msg)

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
            await self.app.bot.answer_callback_query(query_id, text=note or None)
        except TelegramError as exc:
            log.info("could not answer callback query %s: %s", query_id, exc)

    async def _media(self, mapped: Mapped) -> None:
        info = await self.manager.session_info(ChatKey(PLATFORM, str(mapped.chat_id), ""))
        lang = info.lang if info is not None else mapped.lang
        try:  # a reply to a message the bot does not read: best effort, not an outbox row
            await self.post_notice(ChatKey(PLATFORM, str(mapped.chat_id), ""),
                                   Notice("invalid", bot_texts.text("unsupported", lang)), UNRECORDED)
        except DeliveryFailed as exc:
            log.warning("%s", exc)

    # -- bot.surface.Surface ---------------------------------------------------------------------
    async def show_progress(self, chat: ChatKey, event: Event, run: RunInfo) -> None:
        chat_id = int(chat.chat_id)
        if isinstance(event, TextDelta):
            self._draft(chat_id, event)
        elif isinstance(event, StepStarted | Thought | ToolCalled | RunFinished):
            self._close_draft(chat_id)
        if isinstance(event, RunFinished):
            self.typing.stop(chat_id)
            finished = self._progress.pop(chat_id, None)
            if finished is not None:
                finished.apply(event)
                self.outbox.offer(chat_id, finished)
            return
        self.typing.start(chat_id, ours=lambda: self.owns(chat))
        tracker = self._progress.get(chat_id)
        if tracker is None or tracker.sealed or tracker.run != run.run:  # a new run: its own message and Stop
            tracker = RunProgress(self.transport, chat_id, run.lang, run.max_steps, grace=self.progress_grace,
                                  ours=lambda: self.owns(chat), run=run.run, patience=self.progress_patience,
                                  interval=self.outbox.group_interval if chat_id < 0 else self.outbox.private_interval)
            tracker.show_writing = chat_id < 0 or chat_id in self._no_drafts
            self._progress[chat_id] = tracker
            # the lane only looks for work when poked: poke it again when the grace ends
            asyncio.get_running_loop().call_later(self.progress_grace, self.outbox.offer, chat_id, tracker)
        tracker.apply(event)
        self.outbox.offer(chat_id, tracker)
        if not isinstance(event, TextDelta):
            self._remind(chat_id, tracker)

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

    def _draft(self, chat_id: int, event: TextDelta) -> None:
        """Private chats: the text goes to a draft (the progress message shows it elsewhere)."""
        if chat_id < 0 or chat_id in self._no_drafts:
            return
        current = self._drafts.get(chat_id)
        if current is None or current[0] != event.step or current[1].closed:
            draft = AnswerDraft(self.transport, chat_id, next(self._draft_ids), self._draft_refused, time.monotonic)
            self._drafts[chat_id] = (event.step, draft)
            self.drafts_seen = [*self.drafts_seen[-999:], draft]
        else:
            draft = current[1]
        draft.add(event.text)
        self.outbox.offer_draft(chat_id, draft)

    def _close_draft(self, chat_id: int) -> None:
        current = self._drafts.pop(chat_id, None)
        if current is not None:
            current[1].close()

    def _draft_refused(self, draft: AnswerDraft) -> None:
        """No drafts in this chat from now on: the progress message shows the text, as in groups."""
        self._no_drafts.add(draft.chat_id)
        tracker = self._progress.get(draft.chat_id)
        if tracker is not None:
            tracker.show_writing = True
            self.outbox.offer(draft.chat_id, tracker)

    def _pause(self, chat_id: int) -> None:
        self._close_draft(chat_id)
        self.typing.stop(chat_id)
        tracker = self._progress.get(chat_id)
        if tracker is not None:
            tracker.seal()

    async def post_question(self, chat: ChatKey, question: QuestionAsked, run: RunInfo, parts: PartLog) -> None:
        chat_id = int(chat.chat_id)
        self._pause(chat_id)
        is_group = chat_id < 0
        mention = (run.user_id, run.user_name) if is_group and run.user_id.isdigit() else None
        if is_group and not run.user_id and run.user_name.startswith("@"):  # a traveller known by @username
            mention = ("", run.user_name)
        markup: Markup = None
        if question.options:
            markup = InlineKeyboardMarkup([[InlineKeyboardButton(option[:64], callback_data=button_data(i))]
                                           for i, option in enumerate(question.options[:20])])
        elif is_group:
            markup = ForceReply(selective=True, input_field_placeholder=texts.text("question_placeholder", run.lang))
        await self._send_all(chat_id, "question", render.question_html(question, run.lang, mention), parts, markup)

    async def post_answer(self, chat: ChatKey, answer: AnswerReady, verdict: Verdict | None, run: RunInfo,
                          parts: PartLog) -> None:
        chat_id = int(chat.chat_id)
        self._pause(chat_id)
        up, down = feedback_data("up", run.run), feedback_data("down", run.run)
        markup: Markup = None
        if answer.plan is not None and up and down:  # 👍 / 👎 under every plan, naming its run
            markup = InlineKeyboardMarkup([[InlineKeyboardButton("👍", callback_data=up),
                                            InlineKeyboardButton("👎", callback_data=down)]])
        await self._send_all(chat_id, "answer", render.answer_html(answer, verdict, run.lang), parts, markup)

    async def post_notice(self, chat: ChatKey, notice: Notice, parts: PartLog) -> None:
        chat_id = int(chat.chat_id)
        if notice.kind in _ENDING_NOTICES:
            self._pause(chat_id)
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
        await self._send_all(chat_id, "notice", render.notice_html(notice.text), parts, markup, reply_to=reply_to)

    async def members(self, chat: ChatKey) -> frozenset[str] | None:
        return None  # the Bot API lists no group's members

    async def post_file(self, chat: ChatKey, file: Attachment, parts: PartLog) -> None:
        if parts.done:  # sent already by an earlier attempt
            return
        chat_id = int(chat.chat_id)
        send = functools.partial(self.transport.send_document, chat_id, file.content.encode(), file.filename,
                                 caption=file.title)
        try:
            message_id = await self.outbox.send(chat_id, "file", send)
        except TelegramError as exc:
            raise delivery_failed(chat_id, "file", exc) from exc
        except AdapterStopped as exc:
            raise DeliveryFailed(chat_id, "file", str(exc), permanent=False) from exc
        await parts.sent(str(message_id), more=False)

    async def _send_all(self, chat_id: int, kind: str, html: str, parts: PartLog, markup: Markup = None,
                        reply_to: int | None = None) -> None:
        """Send `html` in as many messages as it takes (the markup on the last, the reply on the
        first), skipping the parts an earlier attempt delivered; each part is recorded before the
        next is sent."""
        chunks = split_html(html)
        for i in range(parts.done, len(chunks)):
            last = i == len(chunks) - 1
            send: Callable[[], Awaitable[Any]] = functools.partial(
                self.transport.send_html, chat_id, chunks[i], markup=markup if last else None,
                reply_to=reply_to if i == 0 else None)
            try:
                message_id = await self.outbox.send(chat_id, kind, send)
            except TelegramError as exc:
                raise delivery_failed(chat_id, kind, exc) from exc
            except AdapterStopped as exc:
                raise DeliveryFailed(chat_id, kind, str(exc), permanent=False) from exc
            await parts.sent(str(message_id), more=not last)


def delivery_failed(chat_id: int, kind: str, exc: TelegramError) -> DeliveryFailed:
    """Blocked, chat gone, a request Telegram refuses: never retried. Network trouble and flood
    waits: retried by the delivery worker (after the wait Telegram asked for). python-telegram-bot
    raises NetworkError for no connection, a timeout and any 5xx (BadRequest is a subclass of it,
    and is Telegram refusing the request): those are an outage of Telegram, not of this message."""
    if isinstance(exc, RetryAfter):
        return DeliveryFailed(chat_id, kind, str(exc), permanent=False, retry_after=retry_seconds(exc))
    permanent = isinstance(exc, Forbidden | BadRequest | InvalidToken)
    outage = isinstance(exc, NetworkError) and not isinstance(exc, BadRequest)
    return DeliveryFailed(chat_id, kind, str(exc), permanent=permanent, outage=outage)
