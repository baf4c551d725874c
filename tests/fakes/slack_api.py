"""A fake Slack Web API on 127.0.0.1, as strict as the real one for the methods the bot calls.

In-process (async tests)::

    async with FakeSlack(channels={"C1": "channel", "D1": "im"}) as slack:
        client = AsyncWebClient(token=slack.bot_token, base_url=slack.base_url)
        parent = slack.user_message("C1", "U1", "<@UBOT> plan a trip")
        ...
        await slack.wait_for(lambda s: len(s.bot_posts("C1", parent.ts)) >= 2)

As a process (the bot under test is a subprocess that may be killed)::

    python -m tests.fakes.slack_api --port 0 --channels C1,D1

prints one JSON line ``{"port": ..., "base_url": ...}`` once it listens. The test API lives
under ``/_fake/``: ``POST /_fake/user_message`` {channel, user, text, thread_ts?} -> the message;
``GET /_fake/messages?channel=&thread_ts=`` -> the thread; ``POST /_fake/ratelimit``
{method, count, retry_after} -> the next `count` calls of `method` get 429; ``GET /_fake/calls``.

What it checks like Slack does: the token (``not_authed``, ``invalid_auth``; JSON bodies need
the Authorization header), ``channel_not_found``, ``no_text``, ``msg_too_long`` (text over 40,000
characters), Block Kit (``invalid_blocks``, ``invalid_blocks_format``, ``msg_blocks_too_long``),
``message_not_found`` / ``cant_update_message`` for chat.update, ``thread_not_found``, the token
type (``apps.connections.open`` takes the app-level token and only it; every other method the bot
token: ``not_allowed_token_type``), and rate
limits: HTTP 429 with ``Retry-After`` on demand and when one channel receives more than about one
chat.postMessage per second sustained (a token bucket: `post_burst` at once, `post_rate` per
second after that; Slack's seconds, each `time_scale` of ours: BOT_PLATFORM_TIME_SCALE,
tests/fakes/pace.py; `Retry-After` counts them). Chat streaming: ``chat.startStream`` only in a thread and, outside DMs, for
one recipient (``missing_thread_ts``, ``missing_recipient_user_id``, ``missing_recipient_team_id``),
``task_display_mode`` "timeline" or "plan"; ``chat.appendStream`` / ``chat.stopStream`` only on
an open stream (``message_not_in_streaming_state``), an append with text (``markdown_text``, at
most 12,000 characters) or ``chunks``. Chunks are checked as chat.appendStream documents them
(``invalid_chunks``): a non-empty array of objects of a known type with exactly its fields —
``markdown_text`` {text}, ``task_update`` {id, title, status: pending | in_progress | complete |
error, details?, output?, sources?: [{type: "url", url, text}]}, ``plan_update`` {title},
``blocks`` {blocks: valid Block Kit}; a workspace may refuse the plan display (`refuse_plan_display`:
``task_display_mode: "plan"`` answers ``invalid_arguments``, a ``plan_update`` chunk ``invalid_chunks``).
``chat.postEphemeral`` (seen by one person only: kept in `ephemeral`, not in the channel) needs the
person in the channel (``user_not_in_channel``). Agent sessions (``agents.sessions.*``,
``session_status`` on ``chat.stopStream``, the stop button): tests.fakes.slack_agents, with its
sources.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from aiohttp import web

from tests.fakes import pace
from tests.fakes.process import serve_until_signalled
from tests.fakes.slack_agents import AgentsApiError, AgentSessions
from tests.fakes.slack_blocks import BlockError, validate_blocks

MAX_TEXT = 40_000


class SocketUrls(Protocol):
    def issue_url(self) -> str: ...


@dataclass
class SlackMessage:
    channel: str
    ts: str
    text: str
    user: str
    bot_id: str | None = None
    thread_ts: str | None = None  # the parent's ts for replies; None for a top-level message
    blocks: list[dict[str, Any]] = field(default_factory=list)
    edits: int = 0
    reactions: list[str] = field(default_factory=list)
    stream: str | None = None  # "open" while chat.startStream's message is streaming, then "stopped"
    appends: list[str] = field(default_factory=list)  # the markdown_text pieces a stream received
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)  # task_update chunks: the latest per id
    task_updates: list[dict[str, Any]] = field(default_factory=list)  # every task_update, in order
    display_mode: str | None = None  # chat.startStream's task_display_mode
    plan_title: str | None = None  # the last plan_update chunk's title
    posted_at: float = field(default_factory=time.monotonic)
    files: list[UploadedFile] = field(default_factory=list)  # shared by files.completeUploadExternal

    @property
    def is_bot(self) -> bool:
        return self.bot_id is not None

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "message", "ts": self.ts, "user": self.user, "text": self.text}
        if self.bot_id:
            out["bot_id"] = self.bot_id
        if self.thread_ts:
            out["thread_ts"] = self.thread_ts
        if self.blocks:
            out["blocks"] = self.blocks
        return out

    def accessory_actions(self) -> list[str]:
        """The action ids of buttons beside sections (a status message's Stop)."""
        return [str(b["accessory"].get("action_id")) for b in self.blocks
                if b.get("type") == "section" and isinstance(b.get("accessory"), dict)]

    def button_values(self) -> list[str]:
        return [el.get("value", "") for b in self.blocks if b.get("type") == "actions" for el in b["elements"]]


@dataclass
class UploadedFile:
    """A file of files_upload_v2: announced (getUploadURLExternal), uploaded, then shared (complete)."""

    id: str
    filename: str
    length: int
    content: bytes | None = None  # None until its upload URL received exactly `length` bytes
    title: str = ""
    shared: bool = False


@dataclass(frozen=True)
class Ephemeral:
    """A chat.postEphemeral message: seen by `user` only, gone when they reload."""

    channel: str
    user: str
    text: str
    thread_ts: str | None = None
    blocks: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class ApiCall:
    method: str
    args: dict[str, Any]
    status: int = 200
    error: str | None = None
    at: float = field(default_factory=time.monotonic)


_CHUNK_FIELDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {  # type -> (required, optional)
    "markdown_text": (frozenset({"text"}), frozenset()),
    "task_update": (frozenset({"id", "title", "status"}), frozenset({"details", "output", "sources"})),
    "plan_update": (frozenset({"title"}), frozenset()),
    "blocks": (frozenset({"blocks"}), frozenset()),
}
TASK_STATUSES = ("pending", "in_progress", "complete", "error")


def _stream_chunks(args: dict[str, Any]) -> list[dict[str, Any]] | None:
    """chat.*Stream's `chunks` (a JSON array, or its text in a form body), checked like Slack."""
    raw = args.get("chunks")
    if raw is None:
        return None
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            raise _ApiError("invalid_chunks") from None
    if not isinstance(raw, list) or not raw or not all(_valid_chunk(c) for c in raw):
        raise _ApiError("invalid_chunks")
    return raw


def _valid_chunk(chunk: object) -> bool:
    if not isinstance(chunk, dict) or chunk.get("type") not in _CHUNK_FIELDS:
        return False
    required, optional = _CHUNK_FIELDS[chunk["type"]]
    keys = set(chunk) - {"type"}
    if not required <= keys or keys - required - optional:
        return False

    def text(key: str, *, empty: bool = False) -> bool:
        value = chunk.get(key)
        return isinstance(value, str) and (empty or bool(value.strip()))

    match chunk["type"]:
        case "markdown_text":
            return text("text") and len(chunk["text"]) <= 12_000
        case "task_update":
            sources = chunk.get("sources", [])
            return (text("id") and text("title") and chunk["status"] in TASK_STATUSES
                    and all(text(k, empty=True) for k in ("details", "output") if k in chunk)
                    and isinstance(sources, list)
                    and all(isinstance(u, dict) and u.get("type") == "url" and set(u) == {"type", "url", "text"}
                            and all(isinstance(u[k], str) and u[k] for k in ("url", "text")) for u in sources))
        case "plan_update":
            return text("title")
        case _:  # blocks
            try:
                validate_blocks(chunk["blocks"])
            except BlockError:
                return False
            return True


def _streamed(msg: SlackMessage, text: str, chunks: list[dict[str, Any]] | None) -> None:
    """What a stream call adds to its message: text (markdown_text, then text chunks) and tasks."""
    pieces = [text] if text else []
    for chunk in chunks or []:
        if chunk["type"] == "markdown_text":
            pieces.append(chunk["text"])
        elif chunk["type"] == "task_update":
            msg.task_updates.append(chunk)
            msg.tasks[chunk["id"]] = chunk
        elif chunk["type"] == "plan_update":
            msg.plan_title = chunk["title"]
    for piece in pieces:
        msg.text += piece
        msg.appends.append(piece)


class _ApiError(Exception):
    def __init__(self, error: str, status: int = 200, retry_after: int | None = None) -> None:
        super().__init__(error)
        self.error = error
        self.status = status
        self.retry_after = retry_after


@dataclass
class _Bucket:
    tokens: float
    updated: float


class FakeSlack:
    """The fake Web API. See the module docstring."""

    def __init__(
        self,
        *,
        channels: dict[str, str] | None = None,
        bot_token: str = "xoxb-fake-token",
        app_token: str = "xapp-1-fake-app-token",
        bot_user_id: str = "UBOT",
        bot_id: str = "BBOT",
        team_id: str = "TFAKE",
        post_rate: float = 1.0,
        post_burst: int = 5,
        latency_ms: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        time_scale: float | None = None,
    ) -> None:
        self.channels: dict[str, str] = dict(channels or {})  # id -> "channel" | "im"
        self.bot_token = bot_token
        self.app_token = app_token
        # Socket Mode: tests.fakes.slack_socket.SlackSocketMode issues the URLs apps.connections.open returns
        self.socket_mode: SocketUrls | None = None
        self.bot_user_id = bot_user_id
        self.bot_id = bot_id
        self.team_id = team_id
        self.post_rate = post_rate
        self.post_burst = post_burst
        self.time_scale = pace.time_scale(time_scale)
        self.latency_ms = latency_ms
        self._host = host
        self._port = port
        self.messages: dict[str, list[SlackMessage]] = {}
        self.files: dict[str, UploadedFile] = {}
        # conversations.members: who is in a channel; a channel not listed has everyone who wrote in it
        self.members: dict[str, list[str]] = {}
        self.calls: list[ApiCall] = []
        self.statuses: list[tuple[str, str, str]] = []  # assistant.threads.setStatus (channel, thread, status)
        self.titles: list[tuple[str, str, str]] = []  # assistant.threads.setTitle (channel, thread, title)
        self.suggested: list[tuple[str, str, list[dict[str, str]]]] = []  # setSuggestedPrompts (channel, thread, prompts)
        self.user_locales: dict[str, str] = {}  # users.info locale per user id (default en-US)
        self.user_names: dict[str, str] = {}  # users.info display name per user id (default: none set)
        self.refuse_streams = False  # chat.startStream answers an error (a workspace without streaming)
        self.refuse_plan_display = False  # a workspace that shows a stream's tasks only as a timeline
        self.ephemeral: list[Ephemeral] = []
        self.agents = AgentSessions(self, self._channel)
        self._forced: dict[str, list[int]] = {}  # method -> Retry-After of the next forced 429s
        self._buckets: dict[str, _Bucket] = {}
        self._last_ts = 0.0
        self._changed = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self.port = 0

    # -- lifecycle

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self.port}/api/"

    async def start(self) -> FakeSlack:
        app = web.Application()
        app.router.add_post("/api/{method}", self._api)
        app.router.add_get("/api/{method}", self._api)
        app.router.add_post("/upload/{file_id}", self._upload)
        app.router.add_post("/_fake/user_message", self._t_user_message)
        app.router.add_get("/_fake/messages", self._t_messages)
        app.router.add_post("/_fake/ratelimit", self._t_ratelimit)
        app.router.add_get("/_fake/calls", self._t_calls)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, self._host, self._port).start()
        self.port = int(self._runner.addresses[0][1])
        return self

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeSlack:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- test API

    def add_channel(self, channel: str, kind: str = "channel") -> None:
        self.channels[channel] = kind

    def user_message(self, channel: str, user: str, text: str, thread_ts: str | None = None) -> SlackMessage:
        """A person posts `text` (the bot learns of it only through an event the test delivers)."""
        if channel not in self.channels:
            raise KeyError(f"unknown channel {channel}")
        if thread_ts is not None:
            thread_ts = self._thread_root(channel, thread_ts)
        msg = SlackMessage(channel=channel, ts=self._next_ts(), text=text, user=user, thread_ts=thread_ts)
        self.messages.setdefault(channel, []).append(msg)
        return msg

    def ratelimit(self, method: str, count: int = 1, retry_after: int = 1) -> None:
        """The next `count` calls of `method` are answered 429 with this Retry-After."""
        self._forced.setdefault(method, []).extend([retry_after] * count)

    def thread(self, channel: str, thread_ts: str) -> list[SlackMessage]:
        """The parent and its replies, oldest first."""
        return [m for m in self.messages.get(channel, []) if m.ts == thread_ts or m.thread_ts == thread_ts]

    def bot_posts(self, channel: str, thread_ts: str | None = None) -> list[SlackMessage]:
        msgs = self.messages.get(channel, []) if thread_ts is None else self.thread(channel, thread_ts)
        return [m for m in msgs if m.is_bot]

    def find(self, channel: str, ts: str) -> SlackMessage | None:
        return next((m for m in self.messages.get(channel, []) if m.ts == ts), None)

    def press_stop(self, channel: str, thread_ts: str, user: str) -> dict[str, Any]:
        """A person presses the stop button of the thread's agent session: the event to deliver."""
        return self.agents.press_stop(channel, thread_ts, user)

    def calls_of(self, method: str) -> list[ApiCall]:
        return [c for c in self.calls if c.method == method]

    async def wait_for(self, predicate: Callable[[FakeSlack], bool], within: float = 10.0) -> None:
        """Wait until `predicate(fake)` holds; re-checked after every API call."""
        async with asyncio.timeout(within), self._changed:
            await self._changed.wait_for(lambda: predicate(self))

    # -- internals

    def _next_ts(self) -> str:
        now = max(time.time(), self._last_ts + 0.000001)
        self._last_ts = round(now, 6)
        return f"{self._last_ts:.6f}"

    # what tests.fakes.slack_agents needs of the messages
    def thread_root(self, channel: str, ts: str) -> str:
        return self._thread_root(channel, ts)

    def open_streams(self, channel: str, thread_ts: str) -> list[SlackMessage]:
        return [m for m in self.thread(channel, thread_ts) if m.is_bot and m.stream == "open"]

    def channel_members(self, channel: str) -> list[str]:
        """conversations.members' list: as set in `members`, or everyone who wrote in the channel."""
        everyone = self.members.get(channel)
        if everyone is None:
            everyone = list(dict.fromkeys([self.bot_user_id, *(m.user for m in self.messages.get(channel, []))]))
        return everyone

    def _chunks(self, args: dict[str, Any]) -> list[dict[str, Any]] | None:
        chunks = _stream_chunks(args)
        if self.refuse_plan_display and any(c["type"] == "plan_update" for c in chunks or []):
            raise _ApiError("invalid_chunks")
        return chunks

    def _thread_root(self, channel: str, ts: str) -> str:
        parent = self.find(channel, ts)
        if parent is None:
            raise _ApiError("thread_not_found")
        return parent.thread_ts or parent.ts  # a reply's ts means its thread, as on Slack

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        call = ApiCall(method=method, args={})
        self.calls.append(call)
        try:
            if self.latency_ms:
                await asyncio.sleep(self.latency_ms / 1000)
            call.args = await self._read_args(request)
            self._authenticate(request, call.args, app_level=method == "apps.connections.open")
            handler = self._methods().get(method)
            if handler is None:
                raise _ApiError("unknown_method", status=404)
            bucket = self._rate_limit(method, call.args)
            body = handler(call.args)
            if bucket is not None:  # only a message that got posted uses up the channel's allowance
                bucket.tokens -= 1
            return web.json_response({"ok": True, **body})
        except _ApiError as exc:
            call.status, call.error = exc.status, exc.error
            headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after is not None else None
            return web.json_response({"ok": False, "error": exc.error}, status=exc.status, headers=headers)
        except AgentsApiError as exc:
            call.error = exc.error
            return web.json_response({"ok": False, "error": exc.error, **exc.extra})
        finally:
            await self._notify()

    async def _read_args(self, request: web.Request) -> dict[str, Any]:
        args: dict[str, Any] = dict(request.query)
        if request.method != "POST" or not request.can_read_body:
            return args
        ctype = request.content_type
        if ctype == "application/json":
            try:
                body = json.loads(await request.text())
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise _ApiError("invalid_json") from None
            if not isinstance(body, dict):
                raise _ApiError("invalid_json")
            body.pop("token", None)  # Slack reads the token of a JSON body only from the header
            args["_json"] = True
            args.update(body)
        elif ctype in ("application/x-www-form-urlencoded", "multipart/form-data"):
            args.update({k: v for k, v in (await request.post()).items() if isinstance(v, str)})
        return args

    def _authenticate(self, request: web.Request, args: dict[str, Any], *, app_level: bool) -> None:
        header = request.headers.get("Authorization", "")
        token = header[7:].strip() if header.startswith("Bearer ") else args.pop("token", "")
        args.pop("token", None)
        if not token:
            raise _ApiError("not_authed")
        if token not in (self.bot_token, self.app_token):
            raise _ApiError("invalid_auth")
        if (token == self.app_token) != app_level:
            raise _ApiError("not_allowed_token_type")

    def _rate_limit(self, method: str, args: dict[str, Any]) -> _Bucket | None:
        forced = self._forced.get(method)
        if forced:
            raise _ApiError("ratelimited", status=429, retry_after=forced.pop(0))
        if method != "chat.postMessage" or not isinstance(args.get("channel"), str):
            return None
        now = time.monotonic()
        bucket = self._buckets.setdefault(args["channel"], _Bucket(float(self.post_burst), now))
        refilled = (now - bucket.updated) / self.time_scale * self.post_rate
        bucket.tokens = min(float(self.post_burst), bucket.tokens + refilled)
        bucket.updated = now
        if bucket.tokens < 1:
            wait = max(1, math.ceil((1 - bucket.tokens) / self.post_rate))
            raise _ApiError("ratelimited", status=429, retry_after=wait)
        return bucket

    def _methods(self) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
        return {
            "auth.test": self._auth_test,
            "chat.postMessage": self._post_message,
            "chat.update": self._update,
            "reactions.add": self._reactions_add,
            "assistant.threads.setStatus": self._set_status,
            "assistant.threads.setTitle": self._set_title,
            "assistant.threads.setSuggestedPrompts": self._set_suggested_prompts,
            "users.info": self._users_info,
            "chat.startStream": self._start_stream,
            "chat.appendStream": self._append_stream,
            "chat.stopStream": self._stop_stream,
            "apps.connections.open": self._connections_open,
            "files.getUploadURLExternal": self._get_upload_url,
            "conversations.members": self._conversations_members,
            "files.completeUploadExternal": self._complete_upload,
            "chat.postEphemeral": self._post_ephemeral,
            "agents.sessions.setStatus": self.agents.set_status,
            "agents.sessions.rename": self.agents.rename,
        }

    def _channel(self, args: dict[str, Any], key: str = "channel") -> str:
        channel = args.get(key)
        if not isinstance(channel, str) or channel not in self.channels:
            raise _ApiError("channel_not_found")
        return channel

    @staticmethod
    def _content(args: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
        text = args.get("text") or ""
        if not isinstance(text, str):
            raise _ApiError("invalid_arguments")
        raw_blocks = args.get("blocks")
        blocks: object = []
        if raw_blocks not in (None, "", []):
            if isinstance(raw_blocks, str):
                try:
                    blocks = json.loads(raw_blocks)
                except json.JSONDecodeError:
                    raise _ApiError("invalid_blocks_format") from None
            else:
                blocks = raw_blocks
            try:
                validate_blocks(blocks)
            except BlockError as exc:
                raise _ApiError(exc.error) from None
        if not text and not blocks:
            raise _ApiError("no_text")
        if len(text) > MAX_TEXT:
            raise _ApiError("msg_too_long")
        return text, blocks if isinstance(blocks, list) else []

    def _connections_open(self, args: dict[str, Any]) -> dict[str, Any]:
        if self.socket_mode is None:
            raise _ApiError("socket_mode_not_enabled")  # an app without Socket Mode turned on
        return {"url": self.socket_mode.issue_url()}

    def _auth_test(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"url": "https://fake.slack.test/", "team": "Fake Team", "user": "travelbot",
                "team_id": self.team_id, "user_id": self.bot_user_id, "bot_id": self.bot_id,
                "is_enterprise_install": False}

    def _post_message(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(args)
        text, blocks = self._content(args)
        thread_ts = args.get("thread_ts") or None
        if thread_ts is not None:
            thread_ts = self._thread_root(channel, str(thread_ts))
        msg = SlackMessage(channel=channel, ts=self._next_ts(), text=text, user=self.bot_user_id,
                           bot_id=self.bot_id, thread_ts=thread_ts, blocks=blocks)
        self.messages.setdefault(channel, []).append(msg)
        return {"channel": channel, "ts": msg.ts, "message": msg.wire()}

    def _update(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(args)
        msg = self.find(channel, str(args.get("ts", "")))
        if msg is None:
            raise _ApiError("message_not_found")
        if not msg.is_bot:
            raise _ApiError("cant_update_message")
        if msg.stream == "open":
            raise _ApiError("cant_update_message")  # a message still streaming changes by appendStream only
        text, blocks = self._content(args)
        msg.text, msg.blocks, msg.edits = text, blocks, msg.edits + 1
        return {"channel": channel, "ts": msg.ts, "text": text, "message": msg.wire()}

    def _conversations_members(self, args: dict[str, Any]) -> dict[str, Any]:
        """Paged like Slack's: `limit` (1-1000) per page, the next page's `cursor` in response_metadata."""
        channel = self._channel(args)
        everyone = self.channel_members(channel)
        limit = str(args.get("limit") or "100")
        if not limit.isdigit() or not 1 <= int(limit) <= 1000:
            raise _ApiError("invalid_limit")
        cursor = str(args.get("cursor") or "0")
        if not cursor.isdigit():
            raise _ApiError("invalid_cursor")
        start, size = int(cursor), int(limit)
        page = everyone[start:start + size]
        more = start + size < len(everyone)
        return {"members": page, "response_metadata": {"next_cursor": str(start + size) if more else ""}}

    def _get_upload_url(self, args: dict[str, Any]) -> dict[str, Any]:
        filename, length = args.get("filename"), str(args.get("length", ""))
        if not isinstance(filename, str) or not filename.strip():
            raise _ApiError("invalid_arguments")
        if not length.isdigit() or int(length) <= 0:
            raise _ApiError("invalid_arguments")
        file_id = f"F{len(self.files) + 1:08d}"
        self.files[file_id] = UploadedFile(file_id, filename, int(length))
        return {"file_id": file_id, "upload_url": f"http://{self._host}:{self.port}/upload/{file_id}"}

    async def _upload(self, request: web.Request) -> web.Response:
        """The upload URL: the file's bytes, exactly as many as announced (no token: the URL is the grant)."""
        upload = self.files.get(request.match_info["file_id"])
        body = await request.read()
        if upload is None or upload.content is not None:
            return web.Response(status=404, text="no such upload")
        if len(body) != upload.length:
            return web.Response(status=400, text=f"expected {upload.length} bytes, got {len(body)}")
        upload.content = body
        return web.Response(text=f"OK - {len(body)}")

    def _complete_upload(self, args: dict[str, Any]) -> dict[str, Any]:
        try:
            wanted = json.loads(str(args.get("files", "")))
        except json.JSONDecodeError:
            raise _ApiError("invalid_arguments") from None
        if not isinstance(wanted, list) or not wanted:
            raise _ApiError("invalid_arguments")
        channel = self._channel(args, "channel_id")
        uploads = []
        for item in wanted:
            upload = self.files.get(str(item.get("id"))) if isinstance(item, dict) else None
            if upload is None or upload.shared:
                raise _ApiError("file_not_found")
            if upload.content is None:
                raise _ApiError("file_upload_not_completed")  # completed before its bytes arrived
            upload.title = str(item.get("title") or upload.filename)
            uploads.append(upload)
        thread_ts = args.get("thread_ts") or None
        if thread_ts is not None:
            thread_ts = self._thread_root(channel, str(thread_ts))
        for upload in uploads:
            upload.shared = True
        msg = SlackMessage(channel=channel, ts=self._next_ts(), text=str(args.get("initial_comment") or ""),
                           user=self.bot_user_id, bot_id=self.bot_id, thread_ts=thread_ts, files=uploads)
        self.messages.setdefault(channel, []).append(msg)
        return {"files": [{"id": u.id, "title": u.title, "name": u.filename} for u in uploads]}

    def _reactions_add(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(args)
        msg = self.find(channel, str(args.get("timestamp", "")))
        if msg is None:
            raise _ApiError("message_not_found")
        name = args.get("name")
        if not isinstance(name, str) or not name or ":" in name:
            raise _ApiError("invalid_name")
        if name in msg.reactions:
            raise _ApiError("already_reacted")
        msg.reactions.append(name)
        return {}

    def _set_status(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(args, "channel_id")
        if self.channels[channel] != "im":
            raise _ApiError("not_allowed")  # only assistant threads (DMs with the app) have a status
        thread_ts = args.get("thread_ts")
        status = args.get("status")
        if not isinstance(thread_ts, str) or not isinstance(status, str):
            raise _ApiError("invalid_arguments")
        self._thread_root(channel, thread_ts)
        self.statuses.append((channel, thread_ts, status))
        return {}

    def _assistant_thread(self, args: dict[str, Any], *, whole_dm: bool = False) -> tuple[str, str]:
        """An assistant thread (a DM with the app); `whole_dm`: the thread may be left out, for the
        app's Messages tab as a whole (the Agent experience: slack-sdk 3.48 makes it optional)."""
        channel = self._channel(args, "channel_id")
        if self.channels[channel] != "im":
            raise _ApiError("not_allowed")
        thread_ts = args.get("thread_ts")
        if thread_ts is None and whole_dm:
            return channel, ""
        if not isinstance(thread_ts, str):
            raise _ApiError("invalid_arguments")
        return channel, thread_ts

    def _set_title(self, args: dict[str, Any]) -> dict[str, Any]:
        channel, thread_ts = self._assistant_thread(args)
        title = args.get("title")
        if not isinstance(title, str) or not title.strip():
            raise _ApiError("invalid_arguments")
        self.titles.append((channel, thread_ts, title))
        return {}

    def _set_suggested_prompts(self, args: dict[str, Any]) -> dict[str, Any]:
        channel, thread_ts = self._assistant_thread(args, whole_dm=True)
        prompts = args.get("prompts")
        if isinstance(prompts, str):
            prompts = json.loads(prompts)
        if not isinstance(prompts, list) or not 1 <= len(prompts) <= 4 or not all(
                isinstance(p, dict) and isinstance(p.get("title"), str) and isinstance(p.get("message"), str)
                for p in prompts):
            raise _ApiError("invalid_arguments")  # one to four prompts, each a title and a message
        self.suggested.append((channel, thread_ts, prompts))
        return {}

    def _post_ephemeral(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(args)
        user = args.get("user")
        if not isinstance(user, str) or not user:
            raise _ApiError("user_not_found")
        if user not in self.channel_members(channel):
            raise _ApiError("user_not_in_channel")
        text, blocks = self._content(args)
        thread_ts = args.get("thread_ts") or None
        if thread_ts is not None:
            thread_ts = self._thread_root(channel, str(thread_ts))
        self.ephemeral.append(Ephemeral(channel, user, text, thread_ts, blocks))
        return {"message_ts": self._next_ts()}

    def _users_info(self, args: dict[str, Any]) -> dict[str, Any]:
        user = args.get("user")
        if not isinstance(user, str) or not user:
            raise _ApiError("user_not_found")
        # as Slack answers: `name` is the handle; the names people see are in the profile (empty when unset)
        shown = self.user_names.get(user, "")
        out: dict[str, Any] = {"id": user, "team_id": self.team_id, "name": user.lower(), "real_name": shown,
                               "profile": {"display_name": shown, "real_name": shown}}
        if str(args.get("include_locale", "")).lower() in ("1", "true"):
            out["locale"] = self.user_locales.get(user, "en-US")
        return {"user": out}

    def _start_stream(self, args: dict[str, Any]) -> dict[str, Any]:
        """A streamed reply: always in a thread; in channels, for one recipient (user and team)."""
        channel = self._channel(args)
        if self.refuse_streams:
            raise _ApiError("not_allowed_token_type")
        thread_ts = args.get("thread_ts")
        if not isinstance(thread_ts, str) or not thread_ts:
            raise _ApiError("missing_thread_ts")
        root = self._thread_root(channel, thread_ts)
        if self.channels[channel] != "im":
            if not args.get("recipient_user_id"):
                raise _ApiError("missing_recipient_user_id")
            if not args.get("recipient_team_id"):
                raise _ApiError("missing_recipient_team_id")
        text = args.get("markdown_text") or ""
        if not isinstance(text, str) or len(text) > 12_000:
            raise _ApiError("invalid_arguments")
        mode = args.get("task_display_mode")
        if mode not in (None, "timeline", "plan") or (mode == "plan" and self.refuse_plan_display):
            raise _ApiError("invalid_arguments")
        chunks = self._chunks(args)
        msg = SlackMessage(channel=channel, ts=self._next_ts(), text="", user=self.bot_user_id,
                           bot_id=self.bot_id, thread_ts=root, stream="open", display_mode=mode)
        _streamed(msg, text, chunks)
        self.messages.setdefault(channel, []).append(msg)
        return {"channel": channel, "ts": msg.ts}

    def _open_stream(self, args: dict[str, Any]) -> SlackMessage:
        channel = self._channel(args)
        msg = self.find(channel, str(args.get("ts", "")))
        if msg is None:
            raise _ApiError("message_not_found")
        if msg.stream != "open":
            raise _ApiError("message_not_in_streaming_state")
        return msg

    def _append_stream(self, args: dict[str, Any]) -> dict[str, Any]:
        msg = self._open_stream(args)
        text = args.get("markdown_text")
        chunks = self._chunks(args)
        if chunks is None and (not isinstance(text, str) or not text):
            raise _ApiError("invalid_arguments")
        if text is not None and (not isinstance(text, str) or len(text) > 12_000):
            raise _ApiError("invalid_arguments")
        _streamed(msg, text or "", chunks)
        return {"channel": msg.channel, "ts": msg.ts}

    def _stop_stream(self, args: dict[str, Any]) -> dict[str, Any]:
        msg = self._open_stream(args)
        text = args.get("markdown_text")
        if text is not None and (not isinstance(text, str) or len(text) > 12_000):
            raise _ApiError("invalid_arguments")
        chunks = self._chunks(args)
        self.agents.stream_stopped(msg.channel, msg.thread_ts or msg.ts, args.get("session_status"))
        _streamed(msg, text or "", chunks)
        msg.stream = "stopped"
        return {"channel": msg.channel, "ts": msg.ts, "message": msg.wire()}

    # -- test API over HTTP (for a bot running as a subprocess)

    async def _t_user_message(self, request: web.Request) -> web.Response:
        body = await request.json()
        try:
            msg = self.user_message(body["channel"], body["user"], body["text"], body.get("thread_ts"))
        except (KeyError, _ApiError) as exc:
            return web.json_response({"ok": False, "error": str(exc)}, status=400)
        return web.json_response({"ok": True, "message": {**msg.wire(), "channel": msg.channel}})

    async def _t_messages(self, request: web.Request) -> web.Response:
        channel = request.query.get("channel", "")
        thread_ts = request.query.get("thread_ts")
        msgs = self.thread(channel, thread_ts) if thread_ts else self.messages.get(channel, [])
        return web.json_response({"messages": [{**m.wire(), "edits": m.edits} for m in msgs]})

    async def _t_ratelimit(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.ratelimit(body["method"], int(body.get("count", 1)), int(body.get("retry_after", 1)))
        return web.json_response({"ok": True})

    async def _t_calls(self, request: web.Request) -> web.Response:
        return web.json_response({"calls": [
            {"method": c.method, "status": c.status, "error": c.error} for c in self.calls
        ]})


async def _main(args: argparse.Namespace) -> None:
    channels = {c: ("im" if c.startswith("D") else "channel") for c in args.channels.split(",") if c}
    fake = FakeSlack(channels=channels, bot_token=args.token, host=args.host, port=args.port,
                     post_rate=args.post_rate, post_burst=args.post_burst)
    await serve_until_signalled(fake, {"port": lambda: fake.port, "base_url": lambda: fake.base_url})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A fake Slack Web API.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--channels", default="C1,C2,D1", help="comma-separated ids; D... are DMs")
    parser.add_argument("--token", default="xoxb-fake-token")
    parser.add_argument("--post-rate", type=float, default=1.0)
    parser.add_argument("--post-burst", type=int, default=5)
    asyncio.run(_main(parser.parse_args(argv if argv is not None else sys.argv[1:])))


if __name__ == "__main__":
    main()
