"""The Slack surface: Bolt (async) receives events, the SDK's AsyncWebClient talks back.

HTTP mode serves `POST /slack/events` through `router()`: Bolt's request verification checks
the signature first (five-minute window; refusals are logged without the body, see
adapters/slack/signing.py), then Bolt runs the listener, which only maps the event and submits
it to the SessionManager (stored in the inbox: a few milliseconds; it never waits for a run),
and only then the empty 200 acks: a 2xx means "stored", whichever process behind a load
balancer took the request, and a process killed before storing lets Slack retry the event. Socket Mode (SLACK_APP_TOKEN) feeds the same Bolt
app over a websocket instead.

Every Web API call goes through one AsyncWebClient with the SDK's rate-limit retry handler,
which sleeps for the `Retry-After` Slack sends with a 429 and tries again (on the platform's
clock: adapters/slack/rate_limits.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

import aiohttp
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from slack_bolt.adapter.fastapi.async_handler import AsyncSlackRequestHandler
from slack_bolt.adapter.starlette.async_handler import to_async_bolt_request
from slack_bolt.app.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.context.set_suggested_prompts.async_set_suggested_prompts import (
    AsyncSetSuggestedPrompts,
)
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncConnectionErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from adapters.slack import render
from adapters.slack.errors import SlackCallFailed, SlackNotConfigured
from adapters.slack.inbound import PLATFORM, route_button, route_decision, route_event, route_stop
from adapters.slack.mrkdwn import escape
from adapters.slack.people import People
from adapters.slack.progress import ProgressBoard, task_title
from adapters.slack.rate_limits import rate_limit_retries as rate_limit_handler
from adapters.slack.signing import SignedRequests
from adapters.slack.stream_calls import SlackStreamCalls, without_streamed
from adapters.slack.streaming import AnswerStreams
from adapters.slack.texts import lang_of, lang_of_locale, suggested_prompts, t
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
    IncomingMessage,
    Notice,
    PartLog,
    RunInfo,
    SubmitOutcome,
)

if TYPE_CHECKING:
    from bot.sessions import SessionManager

log = logging.getLogger(__name__)
MEMBER_PAGES = 50  # conversations.members pages (200 each) read before giving up on a huge channel

EVENTS_PATH = "/slack/events"
STOP_ACTION = "stop_run"
_STOPPING_NOTICES = {"error", "cancelled", "new"}
_NOT_TASKS = {"ask_human", "terminate"}  # shown otherwise: the question is a message, the end is the answer


def _answered_inline(body: bytes) -> bool:
    """url_verification and ssl_check need Bolt's answer in the response; nothing else does."""
    head = body[:200]
    return b'"url_verification"' in head or b"ssl_check=" in head or not head.strip()


class SlackAdapter:
    platform = PLATFORM

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
        self._app_token = app_token
        self._client = AsyncWebClient(
            token=token,
            base_url=settings.slack_api_base_url,
            logger=log,
            retry_handlers=[
                AsyncConnectionErrorRetryHandler(max_retry_count=2),
                rate_limit_handler(rate_limit_retries, settings.platform_time_scale),
            ],
        )
        # Bolt's verification runs in _events_endpoint, before the ack (SignedRequests), not again
        # in the app's middleware after it.
        self._app = AsyncApp(client=self._client, signing_secret=secret or "", logger=log,
                             request_verification_enabled=False, process_before_response=True)
        self._handler = AsyncSlackRequestHandler(self._app)
        self._verifier = SignedRequests(secret, logger=log) if secret else None
        scale = settings.platform_time_scale  # the intervals are in Slack's seconds
        self._board = ProgressBoard(self._post_status, self._edit_status, interval=progress_interval * scale)
        self.streams = AnswerStreams(SlackStreamCalls(self._client, self._call, lambda: self.team_id),
                                     interval=stream_interval * scale)
        self.team_id = ""
        self._order: dict[str, tuple[asyncio.Lock, int]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._socket: Any = None
        self._socket_down_since: float | None = None
        self.socket_grace_s = 30.0  # a Socket Mode connection down this long makes /healthz unhealthy
        # what became of each inbound event: accepted, duplicate, refused, invalid, ignored, stale
        self.inbound: Counter[str] = Counter()
        self._inbound_changed = asyncio.Condition()
        self.bot_user_id = ""
        self._app.event("app_mention")(self._on_event)
        self._app.event("message")(self._on_event)
        self._app.action(re.compile(f"^{render.OPTION_ACTION_PREFIX}"))(self._on_button)
        self._app.action(STOP_ACTION)(self._on_stop)
        # DMs with the app and its assistant panel: suggested prompts when a thread opens (other
        # messages in assistant threads go on to the `message` listener above)
        assistant = AsyncAssistant(logger=log)
        assistant.thread_started(self._on_assistant_thread)
        self._app.use(assistant)
        self._app.action(re.compile(f"^{render.SIGNOFF_ACTION_PREFIX}"))(self._on_decision)
        self._app.action(re.compile(f"^{render.SUGGESTION_ACTION_PREFIX}"))(self._on_decision)
        self.people = People(lambda user: self._call("users.info", self._client.users_info(user=user)))

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
        if self._app_token:
            from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

            self._socket = AsyncSocketModeHandler(self._app, self._app_token, web_client=self._client)
            await self._socket.connect_async()
            log.info("slack: Socket Mode connected")

    async def healthy(self) -> bool:
        """Started, and (Socket Mode) connected, or reconnecting for less than `socket_grace_s`:
        the SDK reconnects by itself after Slack's routine refreshes. Events over HTTP are served by
        the HTTP server, whose own health is /healthz's."""
        if not self.bot_user_id:
            return False
        if self._socket is None:
            return True
        if await self._socket.client.is_connected():
            self._socket_down_since = None
            return True
        now = time.monotonic()
        if self._socket_down_since is None:
            self._socket_down_since = now
        return now - self._socket_down_since < self.socket_grace_s

    async def stop(self) -> None:
        if self._socket is not None:
            await self._socket.close_async()
            self._socket = None
        await self._board.close()
        await self.streams.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        session = self._client.session
        if session is not None:
            await session.close()
            self._client.session = None

    def router(self) -> APIRouter:
        router = APIRouter()
        if self._verifier is not None:
            router.add_api_route(EVENTS_PATH, self._events_endpoint, methods=["POST"], include_in_schema=False)
        return router

    async def _events_endpoint(self, request: Request) -> Response:
        body = await request.body()
        assert self._verifier is not None
        bolt_request = to_async_bolt_request(request, body)
        refused = await self._verifier.refusal(bolt_request)
        if refused is not None:
            log.warning("slack: refused a request to %s (%s; timestamp %r, %d bytes) from %s", EVENTS_PATH,
                        refused, request.headers.get("x-slack-request-timestamp"), len(body),
                        request.client.host if request.client else "?")
            return JSONResponse({"error": "invalid request"}, status_code=401)
        if _answered_inline(body):
            response = await self._handler.handle(request)
            # No listener for this payload: still a delivery we accept, or Slack would retry it.
            return Response(status_code=200) if response.status_code == 404 else response
        # Events and clicks: stored first (the listener submits to the inbox), then the empty 200.
        try:
            resp = await self._app.async_dispatch(bolt_request)
        except Exception:
            log.exception("slack: handling an event failed")
            return Response(status_code=500)  # not stored: Slack delivers it again
        if resp.status >= 500:
            log.warning("slack: Bolt answered %s to a delivery", resp.status)
            return Response(status_code=500)
        return Response(status_code=200)

    # -- inbound ----------------------------------------------------------------------------
    async def _on_event(self, event: dict[str, Any], context: AsyncBoltContext) -> None:
        inbound = route_event(event, context.bot_user_id or self.bot_user_id)
        if inbound is None:
            await self._count("ignored")
            return
        chat = inbound.message.chat
        async with self._in_order(str(chat)):
            if inbound.needs_session and await self._manager.session_info(chat) is None:
                await self._count("ignored")
                return
            outcome = await self._manager.submit(await self.people.named(inbound.message))
        log.debug("slack: %s in %s -> %s", inbound.message.dedup_id, chat, outcome.value)
        if outcome is SubmitOutcome.ACCEPTED and not inbound.needs_session:
            # 👀 on the request: seen, even before the status message appears
            self._spawn(self._call("reactions.add", self._client.reactions_add(
                channel=chat.chat_id, timestamp=str(event.get("ts") or ""), name="eyes")), quiet=True)
            if chat.chat_id.startswith("D") and chat.thread_id and not inbound.message.text.startswith("/"):
                # an assistant thread is named after the request
                title = " ".join(inbound.message.text.split())[:60]
                self._spawn(self._call("assistant.threads.setTitle", self._client.assistant_threads_setTitle(
                    channel_id=chat.chat_id, thread_ts=chat.thread_id, title=title)), quiet=True)
        await self._count(outcome.value)

    async def _on_button(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        press = route_button(body)
        if press is None:
            return
        chat = press.message.chat
        async with self._in_order(str(chat)):
            pending = await self._manager.pending_question(chat)
            if pending is None or (pending.posted_message_id not in (None, press.question_ts)):
                log.info("slack: ignored a click on an old question in %s", chat)
                await self._count("stale")
                return
            outcome = await self._manager.submit(press.message)
        await self._count(outcome.value)
        if outcome is SubmitOutcome.ACCEPTED:
            info = await self._manager.session_info(chat)
            blocks = (body.get("message") or {}).get("blocks") or []
            lang = info.lang if info else "zh"
            self._spawn(self._call("chat.update", self._client.chat_update(
                channel=chat.chat_id, ts=press.question_ts, text=escape(press.message.text),
                blocks=render.chosen(blocks, press.message.user_id, press.message.text, lang))))

    async def _on_stop(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        """The Stop button on a status message: the chat's /stop, from the person who clicked."""
        await self._submit_press(ack, route_stop(body))

    async def _on_decision(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        await self._submit_press(ack, route_decision(body))

    async def _submit_press(self, ack: AsyncAck, press: IncomingMessage | None) -> None:
        await ack()
        if press is None:
            return
        async with self._in_order(str(press.chat)):
            outcome = await self._manager.submit(press)
        await self._count(outcome.value)

    async def _on_assistant_thread(self, payload: dict[str, Any], set_suggested_prompts: AsyncSetSuggestedPrompts) -> None:
        """A new assistant thread: a few requests to start from, in the person's language."""
        user = str((payload.get("assistant_thread") or {}).get("user_id") or payload.get("user") or "")
        lang = "en"
        with contextlib.suppress(SlackCallFailed):
            info = await self._call("users.info", self._client.users_info(user=user, include_locale=True))
            lang = lang_of_locale(str((info.get("user") or {}).get("locale") or ""))
        try:
            await set_suggested_prompts(prompts=suggested_prompts(lang), title=t("prompts_title", lang))
        except SlackApiError as exc:
            log.warning("slack: suggested prompts not set: %s", exc.response.get("error"))

    async def _count(self, outcome: str) -> None:
        async with self._inbound_changed:
            self.inbound[outcome] += 1
            self._inbound_changed.notify_all()

    async def wait_inbound(self, predicate: Callable[[Counter[str]], bool], within: float) -> None:
        """Wait until `predicate(self.inbound)` holds (tests, benchmarks)."""
        async with asyncio.timeout(within), self._inbound_changed:
            await self._inbound_changed.wait_for(lambda: predicate(self.inbound))

    @contextlib.asynccontextmanager
    async def _in_order(self, key: str) -> AsyncIterator[None]:
        """Events of one thread reach the manager in the order Slack delivered them."""
        lock, users = self._order.get(key) or (asyncio.Lock(), 0)
        self._order[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._order[key]
            if users <= 1:
                del self._order[key]
            else:
                self._order[key] = (lock, users - 1)

    # -- the Surface ------------------------------------------------------------------------
    async def show_progress(self, chat: ChatKey, event: Event, run: RunInfo) -> None:
        if isinstance(event, TextDelta):
            self.streams.add(chat, event, run.user_id)
            return
        if isinstance(event, TextReset):  # withdrawn: what follows replaces it in its message
            self.streams.reset(chat)
            return
        if isinstance(event, ToolCalled | ToolFinished) and event.name not in _NOT_TASKS:
            # a task card after the step's text, in the step's message
            title = task_title(event.name, event.arguments) if isinstance(event, ToolCalled) else ""
            self.streams.task(chat, event, run.user_id, title)
        elif isinstance(event, StepStarted):  # the last step's message ends (the answer's waits for it)
            self.streams.end_step(chat)
        opened = self._board.update(chat, event, run)
        if opened and isinstance(event, StepStarted) and chat.chat_id.startswith("D"):
            # Assistant threads (DMs with the app) also show a native "is typing"-like status.
            self._spawn(self._call("assistant.threads.setStatus", self._client.assistant_threads_setStatus(
                channel_id=chat.chat_id, thread_ts=chat.thread_id,
                status=t("working", run.lang, step=event.step, max=event.max_steps))), quiet=True)

    async def post_question(self, chat: ChatKey, question: QuestionAsked, run: RunInfo, parts: PartLog) -> None:
        await self.streams.finish(chat)
        await self._board.settle(chat, "paused")
        post = render.question(question, run.user_id, run.lang)
        resp = await self._call("chat.postMessage", self._client.chat_postMessage(
            channel=chat.chat_id, thread_ts=chat.thread_id or None, text=post.text, blocks=post.blocks,
            unfurl_links=False))
        await parts.sent(str(resp["ts"]), more=False)

    async def post_answer(self, chat: ChatKey, answer: AnswerReady, verdict: PlanVerdict | None,
                          run: RunInfo, parts: PartLog) -> None:
        streamed = await self.streams.finish(chat)
        await self._board.settle(chat, "done", run.run)
        posts = render.answer(answer, verdict, run.lang)
        if streamed is not None and streamed.ts and parts.done == 0 and (
                streamed.revised or streamed.text.strip() == answer.text.strip()):
            # the streamed message becomes the answer's first part (the plan card, the verdict)
            await self._call("chat.update", self._client.chat_update(
                channel=chat.chat_id, ts=streamed.ts, text=posts[0].text, blocks=posts[0].blocks or None))
            await parts.sent(streamed.ts, more=len(posts) > 1)
        await self._post_parts(chat, posts, parts)

    async def post_notice(self, chat: ChatKey, notice: Notice, parts: PartLog) -> None:
        if notice.kind in _STOPPING_NOTICES:
            streamed = await self.streams.finish(chat)
            await self._board.settle(chat, "stopped")
            notice = without_streamed(notice, streamed)
        await self._post_parts(chat, render.notice(notice), parts)

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
        if parts.done:  # shared already by an earlier attempt
            return
        resp = await self._call("files.upload_v2", self._client.files_upload_v2(
            channel=chat.chat_id, thread_ts=chat.thread_id or None, content=file.content.encode(),
            filename=file.filename, title=file.title or file.filename))
        shared = resp.get("files") or [{}]
        await parts.sent(str(shared[0].get("id", "")), more=False)

    async def _post_parts(self, chat: ChatKey, posts: Sequence[render.SlackPost], parts: PartLog) -> None:
        """The parts an earlier attempt posted are in the thread already: never posted twice."""
        for i in range(parts.done, len(posts)):
            resp = await self._call("chat.postMessage", self._client.chat_postMessage(
                channel=chat.chat_id, thread_ts=chat.thread_id or None, text=posts[i].text,
                blocks=posts[i].blocks or None, unfurl_links=False))
            await parts.sent(str(resp.get("ts", "")), more=i < len(posts) - 1)

    # -- Web API ----------------------------------------------------------------------------
    async def _call(self, method: str, call: Awaitable[AsyncSlackResponse]) -> dict[str, Any]:
        """Await one typed Web API call (`self._client.chat_postMessage(...)` and friends): its
        failures become SlackCallFailed naming `method`."""
        try:
            resp = await call
        except SlackApiError as exc:
            raise SlackCallFailed(method, str(exc.response.get("error", exc.response.status_code)),
                                  outage=exc.response.status_code >= 500) from None
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise SlackCallFailed(method, f"{type(exc).__name__}: {exc}", outage=True) from None
        return dict(resp.data) if isinstance(resp.data, dict) else {}

    async def _post_status(self, chat: ChatKey, text: str, stop: str | None) -> str:
        resp = await self._call("chat.postMessage", self._client.chat_postMessage(
            channel=chat.chat_id, thread_ts=chat.thread_id or None, text=text, unfurl_links=False,
            blocks=render.status(text, t("stop_button", lang_of(text)), STOP_ACTION, stop) if stop is not None else None))
        return str(resp["ts"])

    async def _edit_status(self, chat: ChatKey, ts: str, text: str, stop: str | None) -> None:
        """`stop`: the run the Stop button names while it works; None once it ended (no button)."""
        blocks = render.status(text, t("stop_button", lang_of(text)), STOP_ACTION, stop) if stop is not None else []
        await self._call("chat.update", self._client.chat_update(channel=chat.chat_id, ts=ts, text=text, blocks=blocks))

    def _spawn(self, coro: Coroutine[Any, Any, Any], *, quiet: bool = False) -> None:
        async def guarded() -> None:
            try:
                await coro
            except SlackCallFailed as exc:
                (log.debug if quiet else log.warning)("slack: %s", exc)

        task = asyncio.create_task(guarded())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

