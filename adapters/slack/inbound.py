"""What an incoming Slack event or button click means for the runtime.

A mention in a channel, or a DM, starts (or continues) the session of its thread; a plain
message in a thread continues that thread's session if there is one and is ignored
otherwise. Bots, the bot itself and edits, deletions or joins are ignored. `dedup_id` is built
from channel and ts, so a mention delivered both as `app_mention` and as `message` (their
event ids differ), or redelivered with X-Slack-Retry-Num, lands in the inbox once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from adapters.slack.mrkdwn import mentions, strip_mentions, unescape
from adapters.slack.render import FEEDBACK_RATINGS, STOP_VALUE
from bot.surface import RUN_REF, ChatKey, IncomingMessage, MessageKind

PLATFORM = "slack"

# Subtypes that are a person saying something; every other subtype (message_changed,
# message_deleted, bot_message, channel_join, ...) is not addressed to the bot.
_SPOKEN_SUBTYPES = {None, "file_share", "thread_broadcast"}

_COMMANDS = {
    "cancel": "/cancel", "stop": "/cancel", "取消": "/cancel", "停止": "/cancel",
    "new": "/new", "reset": "/new", "新对话": "/new", "重新开始": "/new",
    "status": "/status", "状态": "/status", "进度": "/status",
    "help": "/help", "帮助": "/help",
}


class MessageEvent(BaseModel):
    """The fields of a Slack `message` / `app_mention` event that matter here."""

    model_config = ConfigDict(extra="ignore")

    type: str
    channel: str
    ts: str
    text: str = ""
    user: str | None = None
    bot_id: str | None = None
    subtype: str | None = None
    thread_ts: str | None = None
    channel_type: str | None = None


@dataclass(frozen=True, slots=True)
class Inbound:
    message: IncomingMessage
    needs_session: bool  # True: submit only if the thread already has a session


def command_or_text(text: str) -> str:
    word = text.strip().lower().rstrip("!.。！")
    if word.startswith("/") and word[1:] in {"cancel", "new", "status", "help", "start"}:
        return word
    return _COMMANDS.get(word, text.strip())


def route_event(raw: Mapping[str, Any], bot_user_id: str) -> Inbound | None:
    try:
        event = MessageEvent.model_validate(raw)
    except ValidationError:
        return None
    if event.subtype not in _SPOKEN_SUBTYPES or event.bot_id or not event.user:
        return None
    if event.user == bot_user_id:
        return None
    is_dm = event.channel_type == "im" or (event.channel_type is None and event.channel.startswith("D"))
    mentioned = event.type == "app_mention" or (bool(bot_user_id) and mentions(event.text, bot_user_id))
    in_thread = event.thread_ts is not None and event.thread_ts != event.ts
    if not (mentioned or is_dm or in_thread):
        return None
    text = unescape(strip_mentions(event.text, bot_user_id)) if bot_user_id else unescape(event.text.strip())
    # "> ..." lines quote someone; Slack does not say whose
    quoting = "?" if any(line.lstrip().startswith("&gt;") for line in event.text.splitlines()) else ""
    if mentioned and not text and not in_thread:
        text = "/help"  # a bare mention: say what the bot does instead of planning nothing
    message = IncomingMessage(
        chat=ChatKey(PLATFORM, event.channel, event.thread_ts or event.ts),
        user_id=event.user,
        text=command_or_text(text),
        dedup_id=f"{event.channel}:{event.ts}",
        # A thread in a channel has several people: each message keeps its sender, and only the
        # person who asked (or a traveller, for their own legs) changes the trip (bot.chat.rights).
        # A DM with the app is one person's.
        is_group=not is_dm,
        quoting=quoting,
    )
    return Inbound(message=message, needs_session=not (mentioned or is_dm))


class _User(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str
    username: str = ""  # the person's handle (block_actions payloads carry it)
    name: str = ""


class _Container(BaseModel):
    model_config = ConfigDict(extra="ignore")
    channel_id: str
    message_ts: str
    thread_ts: str | None = None


class _Message(BaseModel):
    model_config = ConfigDict(extra="ignore")
    ts: str
    thread_ts: str | None = None


class _Action(BaseModel):
    model_config = ConfigDict(extra="ignore")
    action_id: str
    block_id: str = ""
    value: str = ""
    action_ts: str = ""


class BlockActions(BaseModel):
    model_config = ConfigDict(extra="ignore")
    user: _User
    container: _Container
    message: _Message | None = None
    actions: list[_Action]


@dataclass(frozen=True, slots=True)
class ButtonPress:
    message: IncomingMessage
    question_ts: str  # the bot message that carried the buttons
    block_id: str


def _pressed(raw: Mapping[str, Any]) -> tuple[BlockActions, _Action, str] | None:
    """A block_actions payload, its first action and the thread it happened in."""
    try:
        payload = BlockActions.model_validate(raw)
    except ValidationError:
        return None
    if not payload.actions:
        return None
    c = payload.container
    thread = c.thread_ts or (payload.message.thread_ts if payload.message else None) or c.message_ts
    return payload, payload.actions[0], thread


def route_button(raw: Mapping[str, Any]) -> ButtonPress | None:
    if (pressed := _pressed(raw)) is None:
        return None
    payload, action, thread = pressed
    c = payload.container
    message = IncomingMessage(
        chat=ChatKey(PLATFORM, c.channel_id, thread),
        user_id=payload.user.id,
        text=action.value,
        # one answer per question message: a second click (or a double click) is a duplicate
        dedup_id=f"{c.channel_id}:{c.message_ts}:button",
        kind=MessageKind.BUTTON,
        reply_to=c.message_ts,
        is_group=not c.channel_id.startswith("D"),
        user_name=payload.user.name,
        handle=f"@{payload.user.username}" if payload.user.username else "",
    )
    return ButtonPress(message=message, question_ts=c.message_ts, block_id=action.block_id)


def route_stop(raw: Mapping[str, Any]) -> IncomingMessage | None:
    """A click on a status message's Stop button: the thread's /stop of the run the button names
    (its value), from the person who clicked (in a channel only the asker may stop; a button of a
    run that ended stops nothing: bot.chat.machine decides). A value that is neither a run nor
    the plain "stop" of older buttons is junk."""
    channel = str((raw.get("channel") or {}).get("id") or (raw.get("container") or {}).get("channel_id") or "")
    message = raw.get("message") or {}
    thread = str(message.get("thread_ts") or message.get("ts") or "")
    user = str((raw.get("user") or {}).get("id") or "")
    actions = raw.get("actions") or [{}]
    value = str(actions[0].get("value") or STOP_VALUE)
    if not (channel and thread and user) or not (value == STOP_VALUE or RUN_REF.match(value)):
        return None
    return IncomingMessage(chat=ChatKey(PLATFORM, channel, thread), user_id=user, text="/stop",
                           is_group=not channel.startswith("D"), run=None if value == STOP_VALUE else value,
                           dedup_id=f"{channel}:{message.get('ts', '')}:stop:{actions[0].get('action_ts', '')}")


def route_decision(raw: Mapping[str, Any]) -> IncomingMessage | None:
    """An Approve / Reject press on a sign-off request, or a Yes / No on a suggestion: a decision
    naming its sign-off or suggestion. Each press is its own (a refused one must not hide the
    approver's); Slack's retries of one are duplicates."""
    if (pressed := _pressed(raw)) is None:
        return None
    payload, action, thread = pressed
    decision, _, named = action.value.partition(":")
    if decision not in ("approve", "reject", "accept", "decline") or not named:
        return None
    c = payload.container
    return IncomingMessage(
        chat=ChatKey(PLATFORM, c.channel_id, thread), user_id=payload.user.id, text=decision,
        dedup_id=f"{c.channel_id}:{c.message_ts}:{payload.user.id}:{action.action_ts or action.value}",
        kind=MessageKind.DECISION, reply_to=c.message_ts, question_id=named, is_group=not c.channel_id.startswith("D"),
        user_name=payload.user.name, handle=f"@{payload.user.username}" if payload.user.username else "",
    )


class SessionStopped(BaseModel):
    """Slack's `agent_session_stopped`: the stop button of the thread's agent session was pressed
    (Slack has stopped our streams in it already, `streaming_message_ts`)."""

    model_config = ConfigDict(extra="ignore")

    type: str
    channel: str
    thread_ts: str
    user: str
    event_ts: str = ""
    streaming_message_ts: list[str] = []


def route_session_stop(raw: Mapping[str, Any]) -> IncomingMessage | None:
    """The native stop button: the thread's /stop of whatever runs now (it names no run), from the
    person who pressed it; bot.chat.machine decides whether they may stop it."""
    try:
        event = SessionStopped.model_validate(raw)
    except ValidationError:
        return None
    if event.type != "agent_session_stopped" or not (event.channel and event.thread_ts and event.user):
        return None
    return IncomingMessage(chat=ChatKey(PLATFORM, event.channel, event.thread_ts), user_id=event.user, text="/stop",
                           is_group=not event.channel.startswith("D"),
                           dedup_id=f"{event.channel}:{event.thread_ts}:session_stop:{event.event_ts}")


@dataclass(frozen=True, slots=True)
class FeedbackPress:
    chat: ChatKey
    user_id: str
    run: str  # the run whose plan it rates (bot.surface.run_ref)
    rating: str  # up | down


def route_feedback(raw: Mapping[str, Any]) -> FeedbackPress | None:
    """A 👍 / 👎 press under a plan (a feedback_buttons element); None for junk."""
    if (pressed := _pressed(raw)) is None:
        return None
    payload, action, thread = pressed
    rating, _, run = action.value.partition(":")
    if rating not in FEEDBACK_RATINGS or not RUN_REF.match(run):
        return None
    return FeedbackPress(ChatKey(PLATFORM, payload.container.channel_id, thread), payload.user.id, run, rating)
