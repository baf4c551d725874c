"""The Slack surface: Bolt (async) receives events, the SDK's AsyncWebClient talks back.

Events arrive over HTTP (`POST /slack/events`, verified, stored, then acked) or Socket Mode:
adapters.slack.intake. What each event means: adapters.slack.listeners. What is posted in the
thread, and the status message a run's progress edits: adapters.slack.posting.

Every Web API call goes through one AsyncWebClient with the SDK's rate-limit retry handler,
which sleeps for the `Retry-After` Slack sends with a 429 and tries again (on the platform's
clock: adapters/slack/rate_limits.py). The thread's agent
session (the Agent experience; adapters.slack.agent_sessions) moves with what is posted: a step
opens `processing`, a question `suspended`, a plan or a stop's notice `active`, /new `closed`;
when the answer streamed, chat.stopStream carries the status.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING

import aiohttp
from fastapi import APIRouter
from slack_bolt.app.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncConnectionErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack import render
from adapters.slack.agent_sessions import AgentSessions, SessionStatus
from adapters.slack.calls import SlackCalls
from adapters.slack.errors import SlackCallFailed, SlackNotConfigured
from adapters.slack.inbound import PLATFORM
from adapters.slack.intake import SlackIntake
from adapters.slack.listeners import SlackListeners
from adapters.slack.posting import SlackPoster
from adapters.slack.progress import ProgressBoard
from adapters.slack.rate_limits import rate_limit_retries as rate_limit_handler
from adapters.slack.stream_calls import SlackStreamCalls, without_streamed
from adapters.slack.streaming import AnswerStreams, Streamed
from adapters.slack.texts import t
from adapters.slack.titles import request_title, task_title, trip_title
from agent_core.events import (
    AnswerReady,
    Event,
    QuestionAsked,
    StepStarted,
    TextDelta,
    TextReset,
    ToolCalled,
    ToolFinished,
)
from agent_core.events import Verdict as PlanVerdict
from bot.settings import Settings
from bot.surface import (
    Attachment,
    ChatKey,
    Notice,
    PartLog,
    RunInfo,
)

if TYPE_CHECKING:
    from bot.sessions import SessionManager

log = logging.getLogger(__name__)
MEMBER_PAGES = 50  # conversations.members pages (200 each) read before giving up on a huge channel

_STOPPING_NOTICES = {"error", "cancelled", "new"}
_NOT_TASKS = {"ask_human", "terminate"}  # shown otherwise: the question is a message, the end is the answer
# the agent session after a notice: a stop or a failure leaves the conversation open, /new closes
# it, a sign-off request waits for a person, a decision ends the wait
_SESSION_AFTER = {"cancelled": SessionStatus.ACTIVE, "error": SessionStatus.ACTIVE, "new": SessionStatus.CLOSED,
                  "signoff": SessionStatus.SUSPENDED, "decided": SessionStatus.ACTIVE}


class SlackAdapter:
    platform = PLATFORM
    signs_off = True  # a press carries the presser's Slack id; the cards have buttons (bot.surface.Surface)

    def __init__(self, settings: Settings, manager: SessionManager, *, progress_interval: float = 1.0,
                 stream_interval: float = 0.5, rate_limit_retries: int = 5) -> None:
        token = settings.slack_bot_token
        secret = settings.slack_signing_secret
        app_token = settings.slack_app_token
        missing = tuple(n for n, v in (("SLACK_BOT_TOKEN", token), ) if not v)
        if not secret and not app_token:
            missing += ("SLACK_SIGNING_SECRET or SLACK_APP_TOKEN",)
        if missing:
            raise SlackNotConfigured(missing)
        self._settings = settings
        self._manager = manager
        self._client = AsyncWebClient(
            token=token,
            base_url=settings.slack_api_base_url,
            logger=log,
            retry_handlers=[
                AsyncConnectionErrorRetryHandler(max_retry_count=2),
                rate_limit_handler(rate_limit_retries, settings.platform_time_scale),
            ],
        )
        self._call = SlackCalls()
        # Bolt's verification runs in the intake's endpoint, before the ack (SignedRequests), not
        # again in the app's middleware after it.
        self._app = AsyncApp(client=self._client, signing_secret=secret or "", logger=log,
                             request_verification_enabled=False, process_before_response=True)
        self.intake = SlackIntake(self._app, self._client, secret, app_token)
        scale = settings.platform_time_scale  # the intervals are in Slack's seconds
        self.poster = SlackPoster(self._client, self._call, manager, settings.timezone)
        self._board = ProgressBoard(self.poster.post_status, self.poster.edit_status, interval=progress_interval * scale)
        self.streams = AnswerStreams(SlackStreamCalls(self._client, self._call, lambda: self.team_id),
                                     interval=stream_interval * scale)
        self.sessions = AgentSessions(self._client, self._call)
        self.team_id = ""
        self.bot_user_id = ""
        self.listeners = SlackListeners(manager, self._client, self._call, lambda: self.bot_user_id, settings.timezone)
        self.listeners.attach(self._app)

    @property
    def inbound(self) -> Counter[str]:
        """What became of each inbound event (adapters.slack.listeners)."""
        return self.listeners.inbound

    async def wait_inbound(self, predicate: Callable[[Counter[str]], bool], within: float) -> None:
        """Wait until `predicate(self.inbound)` holds (tests, benchmarks)."""
        await self.listeners.wait_inbound(predicate, within)

    # -- lifecycle --------------------------------------------------------------------------
    async def start(self) -> None:
        # One HTTP session for every call: a fresh connection per call would cost a handshake each.
        self._client.session = aiohttp.ClientSession()
        try:
            auth = await self._client.auth_test()
        except SlackApiError as exc:
            raise SlackCallFailed("auth.test", str(exc.response.get("error", exc))) from None
        except aiohttp.ClientError as exc:
            raise SlackCallFailed("auth.test", f"{type(exc).__name__}: {exc}") from None
        self.bot_user_id = str(auth.get("user_id") or "")
        self.team_id = str(auth.get("team_id") or "")
        log.info("slack: connected as %s (%s)", auth.get("user"), self.bot_user_id)
        await self.intake.connect()

    async def healthy(self) -> bool:
        """Started, and (Socket Mode) connected or briefly reconnecting (adapters.slack.intake)."""
        return bool(self.bot_user_id) and await self.intake.healthy()

    async def stop(self) -> None:
        await self.intake.close()
        await self._board.close()
        await self.streams.close()
        await self.sessions.close()
        await self._call.close()
        session = self._client.session
        if session is not None:
            await session.close()
            self._client.session = None

    def router(self) -> APIRouter:
        return self.intake.router()

    # -- the Surface ------------------------------------------------------------------------
    async def show_progress(self, chat: ChatKey, event: Event, run: RunInfo) -> None:
        if isinstance(event, TextDelta):
            self.streams.add(chat, event, run.user_id)
            return
        if isinstance(event, TextReset):  # withdrawn: what follows replaces it in its message
            self.streams.reset(chat)
            return
        if isinstance(event, ToolCalled | ToolFinished) and event.name not in _NOT_TASKS:
            # a task of the step's plan, after the step's text, in the step's message
            title = task_title(event.name, event.arguments, run.lang) if isinstance(event, ToolCalled) else ""
            self.streams.task(chat, event, run.user_id, title, plan_title=t("plan_title", run.lang))
        elif isinstance(event, StepStarted):  # the last step's message ends (the answer's waits for it)
            self.streams.end_step(chat)
        opened = self._board.update(chat, event, run)
        if opened and isinstance(event, StepStarted):  # a run (re)starts: its session is processing
            self.sessions.update(chat, SessionStatus.PROCESSING, title=request_title(run.request), initiator=run.user_id,
                                 assistant_status=t("working", run.lang, step=event.step, max=event.max_steps))

    async def post_question(self, chat: ChatKey, question: QuestionAsked, run: RunInfo, parts: PartLog) -> None:
        streamed = await self._end_stream(chat, SessionStatus.SUSPENDED)
        await self._board.settle(chat, "paused")
        await self.poster.question(chat, render.question(question, run.user_id, run.lang), parts)
        self._session_after(chat, SessionStatus.SUSPENDED, streamed)

    async def post_answer(self, chat: ChatKey, answer: AnswerReady, verdict: PlanVerdict | None,
                          run: RunInfo, parts: PartLog) -> None:
        streamed = await self._end_stream(chat, SessionStatus.ACTIVE)
        await self._board.settle(chat, "done", run.run)
        posts = render.answer(answer, verdict, run.lang, run.run)
        if streamed is not None and streamed.ts and parts.done == 0 and (
                streamed.revised or streamed.text.strip() == answer.text.strip()):
            # the streamed message becomes the answer's first part (the plan card, the verdict)
            await self.poster.first_part_in(chat, streamed.ts, posts, parts)
        await self.poster.parts(chat, posts, parts)
        self._session_after(chat, SessionStatus.ACTIVE, streamed)
        if answer.plan is not None:  # the session is named after its trip
            self.sessions.rename(chat, trip_title(answer.plan, run.lang))

    async def post_notice(self, chat: ChatKey, notice: Notice, parts: PartLog) -> None:
        after = _SESSION_AFTER.get(notice.kind)
        streamed = None
        if notice.kind in _STOPPING_NOTICES:
            streamed = await self._end_stream(chat, after)
            await self._board.settle(chat, "stopped")
            notice = without_streamed(notice, streamed)
        if notice.kind == "decided" and notice.reply_to:
            await self.poster.close_card(chat, notice, parts)
        elif notice.cards:  # an expired sign-off: its cards close, then the notice
            await self.poster.close_cards(chat, notice, parts)
        else:
            await self.poster.parts(chat, render.notice(notice), parts)
        if after is not None:
            self._session_after(chat, after, streamed)

    async def _end_stream(self, chat: ChatKey, status: SessionStatus | None) -> Streamed | None:
        """End the thread's stream; once the session's earlier updates landed, its stop carries `status`."""
        if status is not None and self.sessions.available is not False:
            await self.sessions.settled(chat)
            if self.sessions.known_on:
                return await self.streams.finish(chat, session_status=status.value)
        return await self.streams.finish(chat)

    def _session_after(self, chat: ChatKey, status: SessionStatus, streamed: Streamed | None) -> None:
        if streamed is None or not streamed.status_sent:
            self.sessions.update(chat, status)

    async def members(self, chat: ChatKey) -> frozenset[str] | None:
        """conversations.members, every page; None (and a log line) when Slack will not say."""
        found: set[str] = set()
        cursor = None
        try:
            for _ in range(MEMBER_PAGES):
                resp = await self._call("conversations.members", self._client.conversations_members(
                    channel=chat.chat_id, limit=200, cursor=cursor))
                found.update(str(m) for m in resp.get("members") or [])
                cursor = (resp.get("response_metadata") or {}).get("next_cursor") or None
                if not cursor:
                    return frozenset(found)
        except SlackCallFailed as exc:
            log.info("slack: could not list the members of %s: %s", chat.chat_id, exc)
            return None
        return frozenset(found)  # a very large channel: the pages read so far

    async def post_file(self, chat: ChatKey, file: Attachment, parts: PartLog) -> None:
        await self.poster.file(chat, file, parts)
