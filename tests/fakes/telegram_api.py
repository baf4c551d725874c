"""A fake Telegram Bot API server on 127.0.0.1, as strict as the real one where it matters.

In-process (async tests)::

    async with FakeTelegram() as tg:
        settings = Settings(telegram_bot_token=tg.token, telegram_api_base_url=tg.base_url)
        tg.send_text(42, "plan a trip")            # a person writes; delivered by getUpdates
        await tg.wait_for(lambda t: len(t.bot_messages(42)) >= 1)

As a process (so it outlives a bot subprocess that gets killed)::

    python -m tests.fakes.telegram_api --port 0 [--token T] [--flood-control]

prints one JSON line ``{"port": ..., "base_url": ..., "token": ...}`` once it listens; the test
API is then reachable over HTTP under ``/_fake/`` (see `FakeTelegramClient`).

Strictness: the token in the path; 4096 characters after entity parsing; "message is not
modified"; "can't parse entities" for broken HTML; "chat not found", "message to edit not
found", "message to be replied not found"; callback_data of 1-64 bytes; 409 for getUpdates
while a webhook is set or while another getUpdates is pending; 429 with
``parameters.retry_after`` on demand (`flood`) and, with ``flood_control=True``, whenever a
chat gets more than one message or edit per second (20 per minute in groups) or the bot sends
more than 30 per second overall. Violations of those limits are always recorded. Those seconds
are Telegram's: each lasts `time_scale` of ours (BOT_PLATFORM_TIME_SCALE, tests/fakes/pace.py), and
`retry_after` counts them. Drafts, forum topics and guest mode: tests.fakes.telegram_native.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from collections.abc import Callable
from typing import Any

import aiohttp
from aiohttp import web

from tests.fakes import pace
from tests.fakes.process import serve_until_signalled
from tests.fakes.telegram_html import utf16_len
from tests.fakes.telegram_native import NativeMethods, member_of, topic
from tests.fakes.telegram_state import (
    ChatState,
    Document,
    FakeUser,
    RateBook,
    RequestRecord,
    StoredMessage,
    Violation,
)
from tests.fakes.telegram_updates import UpdateFactory
from tests.fakes.telegram_wire import (
    ApiError,
    _bad,
    _json_field,
    _maybe_int,
    _message_text,
    _reply_markup,
    _reply_to,
    _truthy,
)

DEFAULT_TOKEN = "123456789:TEST-fake-token_for-tests"
_MESSAGE_METHODS = {"sendmessage", "editmessagetext"}
_ACTIONS = {
    "typing", "upload_photo", "record_video", "upload_video", "record_voice", "upload_voice",
    "upload_document", "choose_sticker", "find_location", "record_video_note", "upload_video_note",
}


class FakeTelegram(NativeMethods, UpdateFactory):
    def __init__(
        self,
        *,
        token: str = DEFAULT_TOKEN,
        bot_username: str = "trip_test_bot",
        host: str = "127.0.0.1",
        port: int = 0,
        flood_control: bool = False,
        webhook_connections: int = 1,
        time_scale: float | None = None,
    ) -> None:
        super().__init__(bot_id=int(token.split(":", 1)[0]), bot_username=bot_username)
        self.token = token
        self.host = host
        self.port = port
        self.flood_control = flood_control
        # Telegram's setWebhook `max_connections` (40 by default there): updates of different chats
        # are posted this many at a time, one chat's in order. 1 (the default here): one at a time.
        self.webhook_connections = webhook_connections
        self.time_scale = pace.time_scale(time_scale)
        self.rates = RateBook(self.time_scale)
        self.requests: list[RequestRecord] = []
        self.commands: dict[str, list[dict[str, Any]]] = {}
        self.callback_answers: dict[str, dict[str, Any]] = {}
        self.drafts: dict[int, list[tuple[int, str, float]]] = {}  # chat -> (draft_id, text, monotonic time)
        self.refuse_drafts: set[int] = set()  # chats where sendMessageDraft answers 400 (as for a peer without drafts)
        self.outage_error: ApiError | None = None  # set: every call answers it (outage() / recover())
        self.webhook_url = ""
        self.webhook_secret: str | None = None
        self.webhook_deliveries: list[tuple[int, int]] = []  # (update_id, HTTP status)
        self.webhook_last_error: tuple[int, str] | None = None  # (unix time, message) of the last failed delivery
        self._poll_generation = 0
        self._changed = asyncio.Event()  # replaced by a fresh one on every change
        self._runner: web.AppRunner | None = None
        self._deliverer: asyncio.Task[None] | None = None
        self._http: aiohttp.ClientSession | None = None

    # ------------------------------------------------------------------ lifecycle

    @property
    def base_url(self) -> str:
        """python-telegram-bot `base_url`: the token gets appended."""
        return f"http://{self.host}:{self.port}/bot"

    async def start(self) -> FakeTelegram:
        app = web.Application(client_max_size=8 * 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._api)
        self.add_test_routes(app)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        sockets = site._server.sockets  # type: ignore[union-attr]
        self.port = sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        if self._deliverer:
            self._deliverer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._deliverer
        if self._http:
            await self._http.close()
        if self._runner:
            await self._runner.cleanup()

    async def __aenter__(self) -> FakeTelegram:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ test API: reading

    def bot_messages(self, chat_id: int) -> list[StoredMessage]:
        chat = self.chats.get(chat_id)
        return [m for m in chat.messages.values() if m.from_bot] if chat else []

    def chat_actions(self, chat_id: int) -> list[tuple[float, str]]:
        chat = self.chats.get(chat_id)
        return list(chat.actions) if chat else []

    @property
    def violations(self) -> list[Violation]:
        return list(self.rates.violations)

    def calls(self, method: str) -> list[RequestRecord]:
        return [r for r in self.requests if r.method == method.lower()]

    async def wait_for(self, predicate: Callable[[FakeTelegram], bool], within: float = 5.0) -> None:
        async def _wait() -> None:
            await self._until(lambda: predicate(self))

        try:
            await asyncio.wait_for(_wait(), within)
        except TimeoutError:
            raise AssertionError(f"condition not met within {within}s; chats: {self.dump()}") from None

    def dump(self) -> dict[str, Any]:
        return {cid: [m.summary() for m in c.messages.values()] for cid, c in self.chats.items()}

    # ------------------------------------------------------------------ test API: faults

    def flood(self, chat_id: int, seconds: float) -> None:
        """Every message or edit to `chat_id` gets 429 with retry_after for `seconds` (Telegram's) from now."""
        chat = self._chat(chat_id)
        chat.flood_until = time.monotonic() + seconds * self.time_scale
        chat.flood_told = False

    def block(self, chat_id: int) -> None:
        self._chat(chat_id).blocked = True

    def fail_sends(self, chat_id: int, count: int, *, containing: str = "") -> None:
        """The next `count` sendMessage calls to `chat_id` whose text contains `containing` get a
        502 Bad Gateway (what Telegram's front answers while the Bot API server restarts)."""
        chat = self._chat(chat_id)
        chat.fail_sends = count
        chat.fail_containing = containing

    def outage(self, code: int = 500, description: str = "Internal Server Error") -> None:
        """Every Bot API call answers `code` until `recover()`: what clients see while Telegram's
        servers are down (500 Internal Server Error, or 502 Bad Gateway from its front)."""
        self.outage_error = ApiError(code, description)

    def recover(self) -> None:
        self.outage_error = None

    # ------------------------------------------------------------------ updates

    def _after_enqueue(self) -> None:
        self._kick()

    async def _until(self, condition: Callable[[], bool]) -> None:
        while not condition():
            await self._changed.wait()

    def _notify(self) -> None:
        """Wake everything waiting for a change; each waiter checks its own condition once."""
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def _kick(self) -> None:
        self._notify()
        if self.webhook_url and (self._deliverer is None or self._deliverer.done()):
            with contextlib.suppress(RuntimeError):
                self._deliverer = asyncio.get_running_loop().create_task(self._deliver())

    async def _deliver(self) -> None:
        """Webhook mode: POST pending updates in order, one at a time, retrying failures."""
        if self._http is None:
            self._http = aiohttp.ClientSession()
        if self.webhook_connections > 1:
            await self._deliver_many()
            return
        delay = 0.1
        while self.webhook_url and self.pending:
            update = self.pending[0]
            headers = {"Content-Type": "application/json"}
            if self.webhook_secret:
                headers["X-Telegram-Bot-Api-Secret-Token"] = self.webhook_secret
            try:
                async with self._http.post(self.webhook_url, data=json.dumps(update), headers=headers) as resp:
                    status = resp.status
            except aiohttp.ClientError:
                status = 0
            self.webhook_deliveries.append((update["update_id"], status))
            if not 200 <= status < 300:  # what getWebhookInfo reports afterwards (last_error_*)
                self.webhook_last_error = (int(time.time()), f"Wrong response from the webhook: {status}"
                                           if status else "Connection refused")
                self._notify()
            if 200 <= status < 300:
                if self.pending and self.pending[0] is update:
                    self.pending.pop(0)
                delay = 0.1
                self._notify()
            else:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)


    async def _deliver_many(self) -> None:
        """Webhook mode with several connections: different chats' updates at once, each chat's
        in order (the next one only after the previous was accepted)."""
        in_flight: dict[int, asyncio.Task[None]] = {}  # chat id -> its delivery
        while self.webhook_url and (self.pending or in_flight):
            busy = set(in_flight)
            nxt = next((u for u in self.pending if _update_chat(u) not in busy), None)
            if nxt is None or len(in_flight) >= self.webhook_connections:
                await asyncio.wait(set(in_flight.values()) | {asyncio.ensure_future(self._changed.wait())},
                                   return_when=asyncio.FIRST_COMPLETED)
                continue
            chat = _update_chat(nxt)
            task = asyncio.ensure_future(self._post_update(nxt))
            in_flight[chat] = task
            task.add_done_callback(lambda _t, c=chat: in_flight.pop(c, None))

    async def _post_update(self, update: dict[str, Any]) -> None:
        assert self._http is not None
        headers = {"Content-Type": "application/json"}
        if self.webhook_secret:
            headers["X-Telegram-Bot-Api-Secret-Token"] = self.webhook_secret
        delay = 0.1
        while self.webhook_url:
            try:
                async with self._http.post(self.webhook_url, data=json.dumps(update), headers=headers) as resp:
                    status = resp.status
            except aiohttp.ClientError:
                status = 0
            self.webhook_deliveries.append((update["update_id"], status))
            if 200 <= status < 300:
                with contextlib.suppress(ValueError):
                    self.pending.remove(update)
                self._notify()
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)

    # ------------------------------------------------------------------ the Bot API

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"].lower()
        if request.match_info["token"] != self.token:
            return web.json_response({"ok": False, "error_code": 401, "description": "Unauthorized"}, status=401)
        handler = getattr(self, f"_m_{method}", None)
        params = await _read_params(request)
        chat_id = _maybe_int(params.get("chat_id"))
        try:
            if self.outage_error is not None:
                raise self.outage_error
            if handler is None:
                raise ApiError(404, "Not Found")
            result = await handler(params)
        except ApiError as exc:
            self.requests.append(RequestRecord(time.monotonic(), method, chat_id, False, exc.description))
            self._notify()
            return web.json_response(exc.body(), status=exc.code)
        self.requests.append(RequestRecord(time.monotonic(), method, chat_id, True))
        self._notify()
        return web.json_response({"ok": True, "result": result})

    async def _m_getme(self, p: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": self.bot_id, "is_bot": True, "first_name": "Trip Test", "username": self.bot_username,
            "can_join_groups": True, "can_read_all_group_messages": False,
            "supports_inline_queries": False, "can_connect_to_business": False, "has_main_web_app": False,
            "has_topics_enabled": True, "allows_users_to_create_topics": True, "supports_guest_queries": True,
        }

    async def _m_getupdates(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        if self.webhook_url:
            raise ApiError(409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first")
        offset = _maybe_int(p.get("offset")) or 0
        limit = _maybe_int(p.get("limit")) or 100
        if not 1 <= limit <= 100:
            limit = 100
        timeout = max(0.0, float(p.get("timeout") or 0))
        if "allowed_updates" in p:
            self.allowed_updates = _json_field(p, "allowed_updates") or None
        if offset > 0:
            self.pending = [u for u in self.pending if u["update_id"] >= offset]
        elif offset < 0:
            self.pending = self.pending[offset:]
        self._poll_generation += 1
        generation = self._poll_generation

        def ready() -> bool:
            return bool(self.pending) or generation != self._poll_generation

        self._notify()  # an earlier poll sees that it was superseded
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._until(ready), timeout)
        if generation != self._poll_generation:
            raise ApiError(409, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running")
        return self.pending[:limit]

    async def _m_deletewebhook(self, p: dict[str, Any]) -> bool:
        self.webhook_url = ""
        self.webhook_secret = None
        if _truthy(p.get("drop_pending_updates")):
            self.pending.clear()
        return True

    async def _m_setwebhook(self, p: dict[str, Any]) -> bool:
        url = str(p.get("url") or "")
        secret = p.get("secret_token")
        if url and not (url.startswith("https://") or url.startswith("http://127.0.0.1") or url.startswith("http://localhost")):
            raise _bad("bad webhook: HTTPS url must be provided for webhook")
        if secret is not None:
            secret = str(secret)
            if not (1 <= len(secret) <= 256) or not all(c.isalnum() or c in "_-" for c in secret):
                raise _bad("secret token contains unallowed characters")
        if "allowed_updates" in p:
            self.allowed_updates = _json_field(p, "allowed_updates") or None
        if _truthy(p.get("drop_pending_updates")):
            self.pending.clear()
        self.webhook_url = url
        self.webhook_secret = secret
        self._poll_generation += 1  # a pending getUpdates is cut off
        self._kick()
        return True

    async def _m_getwebhookinfo(self, p: dict[str, Any]) -> dict[str, Any]:
        info: dict[str, Any] = {"url": self.webhook_url, "has_custom_certificate": False,
                                "pending_update_count": len(self.pending)}
        if self.webhook_url and self.webhook_last_error is not None:
            info["last_error_date"], info["last_error_message"] = self.webhook_last_error
        return info

    async def _m_setmycommands(self, p: dict[str, Any]) -> bool:
        commands = _json_field(p, "commands")
        if not isinstance(commands, list) or len(commands) > 100:
            raise _bad("commands must be an array of at most 100 BotCommand")
        for c in commands:
            name = str(c.get("command", "")) if isinstance(c, dict) else ""
            desc = str(c.get("description", "")) if isinstance(c, dict) else ""
            if not (1 <= len(name) <= 32) or not all(ch.islower() or ch.isdigit() or ch == "_" for ch in name):
                raise _bad("BOT_COMMAND_INVALID")
            if not (1 <= len(desc) <= 256):
                raise _bad("BOT_COMMAND_DESCRIPTION_INVALID")
        self.commands[str(p.get("language_code") or "")] = commands
        return True

    async def _m_sendchataction(self, p: dict[str, Any]) -> bool:
        chat = self._known_chat(p)
        thread = topic(chat, p)
        action = str(p.get("action") or "")
        if action not in _ACTIONS:
            raise _bad("wrong parameter action in request")
        chat.actions.append((time.monotonic(), action))
        chat.action_threads.append(thread)
        return True

    async def _m_answercallbackquery(self, p: dict[str, Any]) -> bool:
        qid = str(p.get("callback_query_id") or "")
        if qid not in self.open_queries or qid in self.callback_answers:
            raise _bad("query is too old and response timeout expired or query ID is invalid")
        text = str(p.get("text") or "")
        if utf16_len(text) > 200:
            raise _bad("MESSAGE_TOO_LONG")
        self.callback_answers[qid] = {"text": text, "show_alert": _truthy(p.get("show_alert"))}
        return True

    async def _m_sendmessage(self, p: dict[str, Any]) -> dict[str, Any]:
        chat = self._known_chat(p)
        thread = topic(chat, p)
        text, raw, parse_mode, entities = _message_text(p)
        if chat.fail_sends > 0 and chat.fail_containing in text:
            chat.fail_sends -= 1
            raise ApiError(502, "Bad Gateway")
        markup = _reply_markup(p)
        reply_to = _reply_to(p)
        if reply_to is not None and reply_to[0] not in chat.messages and not reply_to[1]:
            raise _bad("message to be replied not found")
        self._rate_check(chat, "sendmessage")
        msg = StoredMessage(
            message_id=chat.new_id(), chat_id=chat.id, from_bot=True, text=text, raw=raw,
            parse_mode=parse_mode, entities=entities, reply_markup=markup,
            reply_to=reply_to[0] if reply_to and reply_to[0] in chat.messages else None,
            user=self.bot_user, thread=thread,
        )
        chat.messages[msg.message_id] = msg
        return self.message_wire(chat, msg)

    async def _m_senddocument(self, p: dict[str, Any]) -> dict[str, Any]:
        """A document uploaded as multipart/form-data (a file_id or URL of a file this fake never
        stored is refused, as Telegram refuses one it cannot find)."""
        chat = self._known_chat(p)
        thread = topic(chat, p)
        upload = p.get("_files", {}).get("document")
        if upload is None:
            raise _bad("wrong file identifier/HTTP URL specified" if p.get("document") else "there is no document in the request")
        file_name, mime, content = upload
        if not content:
            raise _bad("file must be non-empty")
        if len(content) > 50 * 1024 * 1024:
            raise ApiError(413, "Request Entity Too Large")
        caption = str(p.get("caption") or "")
        if len(caption) > 1024:
            raise _bad("message caption is too long")
        self._rate_check(chat, "senddocument")
        doc = Document(f"BQACAgIAAx{len(chat.messages):06d}", file_name or "document", mime or "application/octet-stream",
                       content)
        msg = StoredMessage(message_id=chat.new_id(), chat_id=chat.id, from_bot=True, text=caption, raw=caption,
                            kind="document", user=self.bot_user, document=doc, thread=thread)
        chat.messages[msg.message_id] = msg
        return self.message_wire(chat, msg)

    async def _m_editmessagetext(self, p: dict[str, Any]) -> dict[str, Any] | bool:
        if p.get("inline_message_id"):
            return await self._edit_inline(p)
        chat = self._known_chat(p)
        mid = _maybe_int(p.get("message_id"))
        if mid is None:
            raise _bad("message identifier is not specified")
        msg = chat.messages.get(mid)
        if msg is None:
            raise _bad("message to edit not found")
        if not msg.from_bot or msg.kind != "text":
            raise _bad("message can't be edited")
        text, raw, parse_mode, entities = _message_text(p)
        markup = _reply_markup(p)
        if markup is not None and "inline_keyboard" not in markup:
            raise _bad("inline keyboard expected")
        if text == msg.text and entities == msg.entities and markup == msg.reply_markup:
            raise _bad("message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
        self._rate_check(chat, "editmessagetext")
        msg.edits.append(msg.text)
        msg.text, msg.raw, msg.parse_mode, msg.entities, msg.reply_markup = text, raw, parse_mode, entities, markup
        return self.message_wire(chat, msg)

    # ------------------------------------------------------------------ helpers

    def _known_chat(self, p: dict[str, Any]) -> ChatState:
        chat_id = _maybe_int(p.get("chat_id"))
        if chat_id is None:
            raise _bad("chat_id is empty" if not p.get("chat_id") else "chat not found")
        chat = self.chats.get(chat_id)
        if chat is None:
            raise _bad("chat not found")
        if chat.blocked:
            raise ApiError(403, "Forbidden: bot was blocked by the user")
        member_of(chat)
        return chat

    def _rate_check(self, chat: ChatState, method: str) -> None:
        now = time.monotonic()
        if chat.flood_until > now:
            if chat.flood_told:
                self.rates.violations.append(Violation("ignored_retry_after", chat.id, method, now))
            chat.flood_told = True
            left = pace.platform_seconds(chat.flood_until - now, self.time_scale)
            raise ApiError(429, f"Too Many Requests: retry after {left}", retry_after=left)
        wait = self.rates.record(chat, method, now)
        if wait is not None and self.flood_control:
            seconds = pace.platform_seconds(wait, self.time_scale)
            chat.flood_until = now + seconds * self.time_scale
            chat.flood_told = True
            raise ApiError(429, f"Too Many Requests: retry after {seconds}", retry_after=seconds)

    @property
    def bot_user(self) -> FakeUser:
        return FakeUser(self.bot_id, "Trip Test", self.bot_username, None, is_bot=True)

    # ------------------------------------------------------------------ test API over HTTP

    def add_test_routes(self, app: web.Application) -> None:
        app.router.add_post("/_fake/inject/{kind}", self._t_inject)
        app.router.add_get("/_fake/chats/{chat_id}", self._t_chat)
        app.router.add_get("/_fake/state", self._t_state)
        app.router.add_post("/_fake/flood", self._t_flood)

    async def _t_inject(self, request: web.Request) -> web.Response:
        kind = request.match_info["kind"]
        args = await request.json()
        fn = {"text": self.send_text, "location": self.send_location, "sticker": self.send_sticker,
              "photo": self.send_photo, "voice": self.send_voice, "button": self.press_button,
              "edit": self.edit_user_message}.get(kind)
        if fn is None:
            return web.json_response({"error": f"unknown kind {kind}"}, status=404)
        return web.json_response({"update_id": fn(**args)})

    async def _t_chat(self, request: web.Request) -> web.Response:
        chat = self.chats.get(int(request.match_info["chat_id"]))
        msgs = [m.summary() for m in chat.messages.values()] if chat else []
        return web.json_response({"messages": msgs, "actions": len(chat.actions) if chat else 0})

    async def _t_state(self, request: web.Request) -> web.Response:
        return web.json_response({
            "violations": [{"kind": v.kind, "chat_id": v.chat_id, "method": v.method} for v in self.violations],
            "pending_updates": len(self.pending), "webhook_url": self.webhook_url,
            "calls": {m: sum(1 for r in self.requests if r.method == m) for m in {r.method for r in self.requests}},
            "commands": self.commands,
        })

    async def _t_flood(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.flood(int(body["chat_id"]), float(body["seconds"]))
        return web.json_response({"ok": True})


class FakeTelegramClient:
    """The test API of a fake running as a separate process."""

    def __init__(self, port: int) -> None:
        self.root = f"http://127.0.0.1:{port}/_fake"

    async def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        async with aiohttp.ClientSession() as s, s.post(f"{self.root}/{path}", json=body) as r:
            r.raise_for_status()
            data: dict[str, Any] = await r.json()
            return data

    async def inject(self, kind: str, **args: Any) -> int:
        return int((await self._post(f"inject/{kind}", args))["update_id"])

    async def messages(self, chat_id: int) -> list[dict[str, Any]]:
        async with aiohttp.ClientSession() as s, s.get(f"{self.root}/chats/{chat_id}") as r:
            data = await r.json()
            return list(data["messages"])

    async def state(self) -> dict[str, Any]:
        async with aiohttp.ClientSession() as s, s.get(f"{self.root}/state") as r:
            data: dict[str, Any] = await r.json()
            return data

    async def wait_for_bot_messages(self, chat_id: int, predicate: Callable[[list[dict[str, Any]]], bool], within: float = 10.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + within
        while True:
            bot = [m for m in await self.messages(chat_id) if m["from_bot"]]
            if predicate(bot):
                return bot
            if time.monotonic() > deadline:
                raise AssertionError(f"condition not met within {within}s; bot messages: {bot}")
            await asyncio.sleep(0.05)  # polling another process: there is no event to wait on


# ---------------------------------------------------------------------- request parsing


async def _read_params(request: web.Request) -> dict[str, Any]:
    params: dict[str, Any] = dict(request.query)
    if request.method == "POST" and request.can_read_body:
        if request.content_type == "application/json":
            body = await request.json()
            if isinstance(body, dict):
                params.update(body)
        else:
            form = await request.post()
            params.update({k: v for k, v in form.items() if isinstance(v, str)})
            files = {k: (v.filename, v.content_type, v.file.read()) for k, v in form.items() if isinstance(v, web.FileField)}
            if files:
                params["_files"] = files
    return params


# ---------------------------------------------------------------------- process entry point


async def _main(args: argparse.Namespace) -> None:
    fake = FakeTelegram(token=args.token, port=args.port, flood_control=args.flood_control)
    await serve_until_signalled(fake, {"port": lambda: fake.port, "base_url": lambda: fake.base_url, "token": fake.token})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--token", default=DEFAULT_TOKEN)
    parser.add_argument("--flood-control", action="store_true")
    asyncio.run(_main(parser.parse_args(argv if argv is not None else sys.argv[1:])))


if __name__ == "__main__":
    main()


def _update_chat(update: dict[str, Any]) -> int:
    """The chat an update belongs to (0 when it names none)."""
    for field in ("message", "edited_message", "channel_post", "edited_channel_post", "guest_message",
                  "stopped_message_generation"):
        if isinstance(update.get(field), dict):
            return int(update[field]["chat"]["id"])
    query = update.get("callback_query")
    if isinstance(query, dict) and isinstance(query.get("message"), dict):
        return int(query["message"]["chat"]["id"])
    return 0
