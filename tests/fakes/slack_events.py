"""Slack's side of the Events API and interactivity: signed deliveries to the bot's endpoint.

    events = SlackEvents(url="http://127.0.0.1:8000/slack/events", signing_secret="s3cret")
    msg = slack.user_message("C1", "U1", "<@UBOT> plan a trip")       # FakeSlack assigns the ts
    resp = await events.app_mention(msg)                               # -> Delivery(status, seconds)
    await events.message(msg)                                          # the same mention as `message`
    await events.block_action(question_msg, user="U1", value="上海虹桥")
    await events.event(slack.press_stop("C1", msg.ts, "U1"))          # the agent session's stop button
    await events.app_home_opened("U1", "D1", tab="messages")           # the Agent experience's Messages tab

Envelopes, headers and the signature scheme (v0 HMAC-SHA256 over "v0:{ts}:{body}") are
Slack's. A press of a `feedback_buttons` element (in a `context_actions` block) is an action
of type "feedback_buttons" whose value is the pressed button's (Slack's block_actions payload,
as Bolt's BlockFeedbackButtonsAction types it). `app_home_opened` carries `tab` ("home" or
"messages"; Slack's event reference). `retry_num` adds X-Slack-Retry-Num/Reason like a redelivery; `timestamp` and
`signature` override the headers to forge or age a request.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import aiohttp

from tests.fakes.slack_api import SlackMessage


@dataclass(frozen=True)
class Delivery:
    status: int
    seconds: float
    body: str


def event_callback(event: dict[str, Any], event_id: str | None = None, *, team_id: str = "TFAKE",
                   api_app_id: str = "AFAKE", bot_user_id: str = "UBOT") -> dict[str, Any]:
    """The Events API envelope around `event` (the same over HTTP and inside a Socket Mode envelope)."""
    return {
        "token": "legacy-verification-token", "team_id": team_id, "api_app_id": api_app_id,
        "event": event, "type": "event_callback", "event_id": event_id or f"Ev{uuid.uuid4().hex[:10].upper()}",
        "event_time": int(time.time()), "authorizations": [
            {"team_id": team_id, "user_id": bot_user_id, "is_bot": True}],
    }


def message_event(msg: SlackMessage, kind: str, channel_type: str | None = None) -> dict[str, Any]:
    """`app_mention` or `message` for a message the fake holds (`message` gets its channel_type)."""
    event: dict[str, Any] = {"type": kind, "user": msg.user, "text": msg.text, "ts": msg.ts,
                             "channel": msg.channel, "event_ts": msg.ts, "blocks": [], "team": "TFAKE"}
    if msg.thread_ts:
        event["thread_ts"] = msg.thread_ts
    if msg.bot_id:
        event["bot_id"] = msg.bot_id
    if kind == "message":
        event["channel_type"] = channel_type or ("im" if msg.channel.startswith("D") else "channel")
    return event


def sign(secret: str, timestamp: str, body: bytes) -> str:
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


class SlackEvents:
    def __init__(self, url: str, signing_secret: str, *, team_id: str = "TFAKE", api_app_id: str = "AFAKE",
                 bot_user_id: str = "UBOT") -> None:
        self.url = url
        self.signing_secret = signing_secret
        self.team_id = team_id
        self.api_app_id = api_app_id
        self.bot_user_id = bot_user_id
        # aiohttp rather than httpx: under a burst of 100 concurrent deliveries httpx's pool,
        # not the bot, dominated the measured ack times
        self._session: aiohttp.ClientSession | None = None

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def post(self, body: bytes, content_type: str, *, retry_num: int | None = None,
                   timestamp: str | None = None, signature: str | None = None) -> Delivery:
        ts = timestamp if timestamp is not None else str(int(time.time()))
        headers = {
            "Content-Type": content_type,
            "X-Slack-Request-Timestamp": ts,
            "X-Slack-Signature": signature if signature is not None else sign(self.signing_secret, ts, body),
        }
        if retry_num is not None:
            headers["X-Slack-Retry-Num"] = str(retry_num)
            headers["X-Slack-Retry-Reason"] = "http_timeout"
        if self._session is None:
            self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0),
                                                  timeout=aiohttp.ClientTimeout(total=10))
        started = time.perf_counter()
        async with self._session.post(self.url, data=body, headers=headers) as resp:
            text = await resp.text()
        return Delivery(resp.status, time.perf_counter() - started, text)

    def envelope(self, event: dict[str, Any], event_id: str | None = None) -> dict[str, Any]:
        return event_callback(event, event_id, team_id=self.team_id, api_app_id=self.api_app_id,
                              bot_user_id=self.bot_user_id)

    async def event(self, event: dict[str, Any], *, event_id: str | None = None, **kw: Any) -> Delivery:
        body = json.dumps(self.envelope(event, event_id)).encode()
        return await self.post(body, "application/json", **kw)

    async def app_mention(self, msg: SlackMessage, **kw: Any) -> Delivery:
        return await self.event(message_event(msg, "app_mention"), **kw)

    async def message(self, msg: SlackMessage, *, channel_type: str | None = None, **kw: Any) -> Delivery:
        return await self.event(message_event(msg, "message", channel_type), **kw)

    async def url_verification(self, challenge: str, **kw: Any) -> Delivery:
        body = json.dumps({"token": "legacy", "challenge": challenge, "type": "url_verification"}).encode()
        return await self.post(body, "application/json", **kw)

    async def app_home_opened(self, user: str, channel: str, *, tab: str = "messages", **kw: Any) -> Delivery:
        return await self.event({"type": "app_home_opened", "user": user, "channel": channel, "tab": tab,
                                 "event_ts": f"{time.time():.6f}"}, **kw)

    async def block_action(self, question: SlackMessage, *, user: str, value: str,
                           action_id: str | None = None, **kw: Any) -> Delivery:
        """A person clicks the button whose value is `value` on the bot's message `question`
        (an actions block's button, or one side of a context_actions block's feedback buttons)."""
        block_id, kind = "", "button"
        for block in question.blocks:
            for el in block.get("elements", []) if block.get("type") == "actions" else []:
                if el.get("value") == value:
                    block_id, action_id = block.get("block_id", ""), action_id or el.get("action_id")
            for el in block.get("elements", []) if block.get("type") == "context_actions" else []:
                sides = [el.get("positive_button") or {}, el.get("negative_button") or {}]
                if el.get("type") == "feedback_buttons" and any(b.get("value") == value for b in sides):
                    block_id, action_id, kind = block.get("block_id", ""), action_id or el.get("action_id"), el["type"]
        if action_id is None:
            raise AssertionError(f"no button with value {value!r} on message {question.ts}")
        container: dict[str, Any] = {"type": "message", "message_ts": question.ts,
                                     "channel_id": question.channel, "is_ephemeral": False}
        if question.thread_ts:
            container["thread_ts"] = question.thread_ts
        payload = {
            "type": "block_actions", "user": {"id": user, "username": user.lower(), "team_id": self.team_id},
            "api_app_id": self.api_app_id, "token": "legacy", "container": container,
            "trigger_id": f"{int(time.time())}.{uuid.uuid4().int % 10**12}",
            "team": {"id": self.team_id, "domain": "fake"}, "channel": {"id": question.channel, "name": "travel"},
            "message": question.wire(), "state": {"values": {}}, "response_url": "http://127.0.0.1:9/unused",
            "actions": [{"type": kind, "action_id": action_id, "block_id": block_id, "value": value,
                         **({"text": {"type": "plain_text", "text": value[:75]}} if kind == "button" else {}),
                         "action_ts": f"{time.time():.6f}"}],
        }
        body = urlencode({"payload": json.dumps(payload)}).encode()
        return await self.post(body, "application/x-www-form-urlencoded", **kw)
