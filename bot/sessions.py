"""SessionManager: the inbox, one-at-a-time per chat, and the routing of each update.

Every update is stored in the inbox before anything else happens. A per-chat drain task
takes the lock, loads the session *after* the lock is held, and decides: a command, the
answer to a waiting question, a new run, or a message that waits its turn (queued). Runs
themselves live in bot.runs.RunDriver, so an answer can be processed while a run waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from agent_core.schema import Message
from bot import texts
from bot.chat import ChatKey, IncomingMessage, MessageKind, Notice, SubmitOutcome, Surface
from bot.commands import Commands, command_of
from bot.deadlines import DeadlineWatcher
from bot.metrics import Metrics
from bot.records import (
    AgentFactory,
    HistoryEntry,
    PendingQuestion,
    SessionInfo,
    history_from_messages,
    location_to_json,
    message_from_json,
    message_to_json,
)
from bot.review import PlanReviewer
from bot.runs import ChatRuntime, RunDriver
from bot.settings import Settings
from bot.store.base import InboxRow, QuestionRow, SessionRow, Store, TurnStart

log = logging.getLogger(__name__)

MAX_TRIES = 3  # attempts at one update before it is set aside
RETRY_DELAY_S = 1.0

class SessionManager:
    def __init__(
        self,
        store: Store,
        agents: AgentFactory,
        settings: Settings,
        metrics: Metrics | None = None,
        reviewer: PlanReviewer | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.settings = settings
        self.metrics = metrics or Metrics()
        self._chats: dict[str, ChatRuntime] = {}
        self._failures: dict[int, int] = {}  # inbox id -> failed attempts (only while failing)
        self._surfaces: dict[str, Surface] = {}
        self._clock = clock
        self._changed = asyncio.Event()
        self.deadlines = DeadlineWatcher(store, self._expire, clock)
        self.driver = RunDriver(
            store=store, agents=agents, settings=settings, metrics=self.metrics, reviewer=reviewer,
            surfaces=self._surfaces, on_run_end=self._run_ended, clock=clock,
            on_question=self.deadlines.wake,
        )
        self.commands = Commands(store, self.driver, settings)
        self._started = False

    # -- lifecycle -------------------------------------------------------------------------
    def attach(self, surface: Surface) -> None:
        self._surfaces[surface.platform] = surface

    async def start(self) -> None:
        """The recovery sweep, then the deadline watcher."""
        self._started = True
        for session in await self.store.running_sessions():
            chat = self._chat(session.chat_key)
            async with chat.lock:
                self.driver.spawn(chat, session.id, session)
        waiting = await self.store.waiting_questions()
        self.metrics.questions_waiting.set(len(waiting))
        self.metrics.sessions_parked.set(len(waiting))
        unposted = [q for q in waiting if q.posted_message_id is None]
        for q in unposted:
            await self.driver.delivery.repost_question(q)
        for row in await self.store.pending_outbox():
            await self.driver.delivery.deliver_outbox(row)
        for key in await self.store.chats_with_inbox():
            self._kick(key)
        self.deadlines.start()

    async def stop(self) -> None:
        self._started = False  # no new drains: runs cancelled below must not start any
        await self.deadlines.stop()
        tasks: list[asyncio.Task[None]] = []
        for chat in self._chats.values():
            tasks.extend(t for t in (chat.drain_task, chat.run_task) if t is not None)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._chats.clear()
        self._started = False

    # -- the public API for surfaces -------------------------------------------------------
    async def submit(self, msg: IncomingMessage) -> SubmitOutcome:
        platform = msg.chat.platform
        if not self.settings.user_allowed(msg.user_id):
            self.metrics.messages_in.labels(platform, "refused").inc()
            lang = texts.detect_lang(msg.text, msg.lang or "zh")
            await self.driver.delivery.notice(msg.chat, Notice("refused", texts.text("refused", lang, user=msg.user_id)))
            return SubmitOutcome.REFUSED
        problem = await self._invalid(msg)
        if problem is not None:
            self.metrics.messages_in.labels(platform, "invalid").inc()
            await self.driver.delivery.notice(msg.chat, problem)
            return SubmitOutcome.INVALID
        inbox_id = await self.store.add_inbox(platform, msg.dedup_id, str(msg.chat), message_to_json(msg))
        if inbox_id is None:
            self.metrics.messages_in.labels(platform, "duplicate").inc()
            return SubmitOutcome.DUPLICATE
        self.metrics.messages_in.labels(platform, "accepted").inc()
        self._kick(str(msg.chat))
        return SubmitOutcome.ACCEPTED

    async def pending_question(self, chat: ChatKey) -> PendingQuestion | None:
        q = await self.store.question_for_chat(str(chat))
        if q is None:
            return None
        return PendingQuestion(q.tool_call_id, q.question, q.options, q.asker_id, q.posted_message_id, q.deadline)

    async def session_info(self, chat: ChatKey) -> SessionInfo | None:
        session = await self.store.get_session(str(chat))
        if session is None:
            return None
        state = session.state
        runtime = self._chats.get(str(chat))
        if state == "waiting" and (runtime is None or not runtime.busy):
            state = "parked"
        return SessionInfo(session.id, state, session.lang, session.run_no, session.run_steps)

    async def history(self, chat: ChatKey) -> list[HistoryEntry]:
        session = await self.store.get_session(str(chat))
        if session is None:
            return []
        return history_from_messages(await self.store.load_messages(session.id))

    async def wait_until_idle(self, chat: ChatKey, timeout: float) -> None:
        """Wait until the chat has no run working and nothing pending in its inbox (tests, benchmarks)."""
        async with asyncio.timeout(timeout):
            while True:
                if await self._quiet(chat):
                    return
                self._changed.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(0.05):
                        await self._changed.wait()

    async def _quiet(self, chat: ChatKey) -> bool:
        """Nothing to do until the person speaks: no work queued, and no run busy (a run waiting
        for an answer counts as quiet, whether its coroutine is still held or parked)."""
        runtime = self._chats.get(str(chat))
        if runtime is not None and runtime.drain_task is not None and not runtime.drain_task.done():
            return False
        session = await self.store.get_session(str(chat))
        if session is not None and session.state == "waiting":
            return True
        if runtime is not None and runtime.busy:
            return False
        if session is not None and session.state == "running":
            return False
        return not await self.store.inbox_for(str(chat), limit=1)

    # -- the drain: one update at a time per chat -----------------------------------------
    def _chat(self, key: str) -> ChatRuntime:
        chat = self._chats.get(key)
        if chat is None:
            chat = self._chats[key] = ChatRuntime(ChatKey.parse(key))
        return chat

    def _kick(self, key: str) -> None:
        if not self._started:
            return  # stopped (or not yet started: start() kicks every chat with work)
        chat = self._chat(key)
        chat.dirty = True
        if chat.drain_task is None or chat.drain_task.done():
            chat.drain_task = asyncio.create_task(self._drain(chat), name=f"drain:{key}")

    async def _drain(self, chat: ChatRuntime) -> None:
        try:
            while True:
                chat.dirty = False
                async with chat.lock:
                    progressed = await self._process_next(chat)
                if not progressed and not chat.dirty:
                    break
        except Exception:
            log.exception("inbox drain failed for %s", chat.key)
            await self._after_failure(chat)
        finally:
            chat.drain_task = None
            self._forget_if_quiet(chat)
            self._notify()

    async def _after_failure(self, chat: ChatRuntime) -> None:
        """Retry a failing update a few times (the store may be briefly unwell), then set it
        aside with a message, so one bad update cannot block the chat for good."""
        row_id = chat.current_row
        if row_id is None:
            return
        tries = self._failures.get(row_id, 0) + 1
        self._failures[row_id] = tries
        if tries < MAX_TRIES:
            asyncio.get_running_loop().call_later(RETRY_DELAY_S * tries, self._kick, str(chat.key))
            return
        self._failures.pop(row_id, None)
        try:
            await self.store.finish_inbox(row_id)
        except Exception:
            log.exception("could not set aside update %s of %s", row_id, chat.key)
            return
        await self.driver.delivery.notice(chat.key, Notice("error", texts.error_text("internal", "zh")))
        asyncio.get_running_loop().call_soon(self._kick, str(chat.key))  # the updates behind it

    async def _process_next(self, chat: ChatRuntime) -> bool:
        """Act on the first update that can be acted on; True when more may be waiting."""
        key = str(chat.key)
        rows = await self.store.inbox_for(key)
        if not rows:
            return False
        session = await self.store.get_session(key)
        question = await self.store.question_for_chat(key) if session and session.state == "waiting" else None
        for row in rows:
            chat.current_row = row.id
            msg = message_from_json(row.body)
            command = command_of(msg.text) if msg.kind is MessageKind.TEXT else None
            if command is not None:
                await self.commands.run(chat, session, row, msg, command)
                return len(rows) > 1
            if question is not None and session is not None:
                if self._answers(msg, question, session):
                    await self._answer(chat, session, question, row, msg)
                    return len(rows) > 1
                await self._queued(chat, row, session.lang)
                continue
            if msg.kind is MessageKind.LOCATION and not msg.text.strip():
                await self._save_location(row, msg, session)
                return len(rows) > 1
            if chat.busy or (session is not None and session.state == "running"):
                if not chat.busy and session is not None:  # running in the store, no task here
                    self.driver.spawn(chat, session.id)
                    return len(rows) > 1
                await self._queued(chat, row, session.lang if session else texts.detect_lang(msg.text, "zh"))
                continue
            await self._start(chat, session, row, msg)
            return len(rows) > 1
        return False

    @staticmethod
    def _answers(msg: IncomingMessage, question: QuestionRow, session: SessionRow) -> bool:
        if not msg.is_group:
            return True
        if question.posted_message_id is not None and msg.reply_to == question.posted_message_id:
            return True
        return msg.user_id == (question.asker_id or session.asker_id)

    async def _start(self, chat: ChatRuntime, session: SessionRow | None, row: InboxRow, msg: IncomingMessage) -> None:
        lang = texts.detect_lang(msg.text, session.lang if session else (msg.lang or "zh"))
        turn = TurnStart(
            chat_key=str(chat.key), inbox_id=row.id, message=Message.user(msg.text.strip()), lang=lang,
            asker_id=msg.user_id, asker_name=msg.user_name, request=msg.text.strip()[:2000],
            location=location_to_json(msg.location),
        )
        fresh = await self.store.start_turn(turn)
        # the first run of a new session: its history is the message just stored
        self.driver.spawn(chat, fresh.id, fresh, [turn.message] if fresh.run_no == 1 else None)

    async def _answer(
        self, chat: ChatRuntime, session: SessionRow, question: QuestionRow, row: InboxRow, msg: IncomingMessage
    ) -> None:
        content = msg.text.strip()
        if msg.location is not None:
            loc = f"(shared location: {msg.location.latitude:.5f}, {msg.location.longitude:.5f})"
            content = f"{content} {loc}".strip()
            await self.store.remember_location(str(chat.key), location_to_json(msg.location) or "", session.lang)
        answer = Message.tool(content, tool_call_id=question.tool_call_id, name="ask_human")
        if not await self.store.resolve_question(session.id, question.tool_call_id, answer, status="answered", inbox_id=row.id):
            return
        self.metrics.questions_waiting.dec()
        self.driver.hand_answer(chat, session.id, answer)

    async def _queued(self, chat: ChatRuntime, row: InboxRow, lang: str) -> None:
        if row.id in chat.noticed:
            return
        chat.noticed.add(row.id)
        await self.driver.delivery.notice(chat.key, Notice("queued", texts.text("queued", lang)))

    async def _save_location(self, row: InboxRow, msg: IncomingMessage, session: SessionRow | None) -> None:
        lang = session.lang if session else (msg.lang or "zh")
        await self.store.remember_location(str(msg.chat), location_to_json(msg.location) or "", lang)
        await self.store.finish_inbox(row.id)
        await self.driver.delivery.notice(msg.chat, Notice("info", texts.text("location_saved", lang)))

    async def _invalid(self, msg: IncomingMessage) -> Notice | None:
        if msg.kind is MessageKind.LOCATION and msg.location is not None:
            return None
        stripped = msg.text.strip()
        if stripped and len(msg.text) <= self.settings.max_message_chars:
            return None
        session = await self.store.get_session(str(msg.chat))
        lang = texts.detect_lang(msg.text[:2000], session.lang if session else (msg.lang or "zh"))
        if not stripped:
            return Notice("invalid", texts.text("empty", lang))
        return Notice("invalid", texts.text("too_long", lang, n=len(msg.text), max=self.settings.max_message_chars))

    # -- runs ending, deadlines ------------------------------------------------------------
    def _run_ended(self, chat: ChatRuntime) -> None:
        self._kick(str(chat.key))
        self._notify()

    def _forget_if_quiet(self, chat: ChatRuntime) -> None:
        if not chat.active and self._chats.get(str(chat.key)) is chat:
            del self._chats[str(chat.key)]

    def _notify(self) -> None:
        self._changed.set()

    async def _expire(self, q: QuestionRow) -> None:
        session = await self.store.session_by_id(q.session_id)
        if session is None:
            return
        chat = self._chat(session.chat_key)
        async with chat.lock:
            hours = self.settings.human_timeout_s / 3600
            answer = Message.tool(texts.NO_ANSWER.format(hours=round(hours, 2)), tool_call_id=q.tool_call_id, name="ask_human")
            if await self.store.resolve_question(q.session_id, q.tool_call_id, answer, status="expired", inbox_id=None):
                self.metrics.questions_waiting.dec()
                self.driver.hand_answer(chat, q.session_id, answer)


