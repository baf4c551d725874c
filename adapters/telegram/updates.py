"""What a Telegram update means for the bot: a message to submit, a button press, a stop pressed
on a draft, media we cannot read, or something to ignore quietly. Pure mapping; no requests are
made here.

Each message belongs to its place (places.py: the chat, or its forum topic). In groups the bot
takes what addresses it: a command, a mention, or a reply to one of its messages (not the
topic's first message, which every message of a forum topic "replies" to). A `guest_message`
(Bot API 10.0 guest mode: the bot summoned where it is no member) always addresses it, and is
bound to questions by the same rules as any message of its chat (bot.chat.addressing)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from telegram import Message, Update
from telegram.constants import ChatType

from adapters.telegram.bot_api import GenerationStopped, generation_stopped
from adapters.telegram.places import Place
from bot.surface import RUN_REF_PATTERN, IncomingMessage, MessageKind
from tools.base import SharedLocation

_BUTTON_DATA = re.compile(r"^o:(\d{1,2})$")
_MEDIA = ("sticker", "photo", "voice", "video", "audio", "document", "animation", "video_note",
          "contact", "poll", "dice")


STOP_DATA = "stop"  # callback_data of a Stop button naming no run (buttons sent before runs were named)
_STOP_DATA = re.compile(rf"^{STOP_DATA}(?::({RUN_REF_PATTERN}))?$")
_SIGNOFF_DATA = re.compile(r"^s:([ar]):([0-9a-f]{32})$")
_FEEDBACK_DATA = re.compile(rf"^f:([ud]):({RUN_REF_PATTERN})$")
_SUGGESTION_DATA = re.compile(r"^g:([yn]):([0-9a-f]{32})$")


def button_data(index: int) -> str:
    """callback_data for the index-th option: tiny, well under Telegram's 64 bytes."""
    return f"o:{index}"


def signoff_data(decision: str, signoff_id: str) -> str:
    """callback_data of a sign-off button: "s:a:<id>" (approve) or "s:r:<id>" (reject), 36 bytes."""
    return f"s:{decision[0]}:{signoff_id}"


def feedback_data(rating: str, run: str) -> str:
    """callback_data of a 👍 / 👎 button under a plan: "f:u:<run>" or "f:d:<run>" (38 bytes for the
    store's session ids); a run too long for 64 bytes gets no buttons ("")."""
    data = f"f:{rating[0]}:{run}"
    return data if _FEEDBACK_DATA.match(data) and len(data.encode()) <= 64 else ""


def suggestion_data(choice: str, suggestion_id: str) -> str:
    """callback_data of a suggestion's Yes / No: "g:y:<id>" (accept) or "g:n:<id>" (decline), 36 bytes."""
    return f"g:{'y' if choice == 'accept' else 'n'}:{suggestion_id}"


def stop_data(run: str) -> str:
    """callback_data of the Stop button on a run's progress message: "stop:<run>" (bot.surface.run_ref,
    47 bytes for the store's session ids), so a press stops that run only; "stop" without one."""
    data = f"{STOP_DATA}:{run}" if run else STOP_DATA
    return data if _STOP_DATA.match(data) and len(data.encode()) <= 64 else STOP_DATA


def parse_button_data(data: str | None) -> int | None:
    m = _BUTTON_DATA.match(data or "")
    return int(m.group(1)) if m else None


class Route(StrEnum):
    SUBMIT = "submit"
    BUTTON = "button"  # an option pressed; the option text comes from the pending question
    STOP = "stop"  # the Stop button: submitted as the chat's /stop of its run (from the person who pressed it)
    DECISION = "decision"  # an Approve / Reject press on a sign-off request, a Yes / No on a suggestion
    DRAFT_STOP = "draft_stop"  # the stop button of a draft (Bot API 10.3): the chat's Stop of the draft's run
    FEEDBACK = "feedback"  # 👍 / 👎 under a plan: message.text is up or down, message.run the run
    BAD_BUTTON = "bad_button"  # junk or unreadable callback data: answer the query, nothing else
    MEDIA = "media"  # stickers, photos, voice...: a short note on what the bot reads
    IGNORE = "ignore"


@dataclass(frozen=True, slots=True)
class Mapped:
    route: Route
    chat_id: int = 0
    message: IncomingMessage | None = None
    addressed: bool = True  # in a group: a command, a mention, or a reply to the bot
    lang: str = "en"
    callback_id: str | None = None
    option_index: int | None = None
    reason: str = ""
    thread: int | None = None  # the forum topic (places.Place) the update came from
    guest_query: str | None = None  # a guest message's query: the bot answers there through it
    stopped: GenerationStopped | None = None  # Route.DRAFT_STOP: which draft

    @property
    def place(self) -> Place:
        return Place(self.chat_id, self.thread)


def lang_of(code: str | None) -> str:
    return "zh" if (code or "").lower().startswith("zh") else "en"


def map_update(update: Update, *, bot_id: int, bot_username: str) -> Mapped:
    if update.callback_query is not None:
        return _map_button(update, bot_id)
    if update.edited_message or update.edited_channel_post:
        return Mapped(Route.IGNORE, reason="edited")
    stopped = generation_stopped(update)
    if stopped is not None:
        return Mapped(Route.DRAFT_STOP, chat_id=stopped.chat.id, thread=stopped.message_thread_id or None,
                      stopped=stopped)
    guest = update.guest_message
    msg = update.message or guest
    if msg is None:
        return Mapped(Route.IGNORE, reason="not a message")
    if msg.chat.type == ChatType.CHANNEL:
        return Mapped(Route.IGNORE, chat_id=msg.chat.id, reason="channel")
    sender = msg.from_user
    if sender is None:
        return Mapped(Route.IGNORE, chat_id=msg.chat.id, reason="no sender")
    if sender.is_bot:
        return Mapped(Route.IGNORE, chat_id=msg.chat.id, reason="bot sender")
    is_group = msg.chat.type in (ChatType.GROUP, ChatType.SUPERGROUP)
    place = Place.of_message(msg)
    replied = _replied(msg)
    addressed = (not is_group or guest is not None
                 or (replied is not None and replied.from_user is not None and replied.from_user.id == bot_id))
    # a reply to someone else's message quotes it: the message is still only its sender's
    quoted = replied.from_user if replied is not None else None
    quoting = str(quoted.id) if quoted is not None and quoted.id not in (bot_id, sender.id) else ""
    lang = lang_of(sender.language_code)
    query = guest.guest_query_id if guest is not None else None
    if guest is not None and not query:
        return Mapped(Route.IGNORE, chat_id=msg.chat.id, reason="guest message without a query")

    def incoming(text: str, kind: MessageKind = MessageKind.TEXT, location: SharedLocation | None = None) -> IncomingMessage:
        return IncomingMessage(
            chat=place.key, user_id=str(sender.id), text=text,
            dedup_id=str(update.update_id), user_name=sender.full_name, kind=kind,
            reply_to=str(replied.message_id) if replied is not None else None, location=location,
            is_group=is_group, lang=lang if sender.language_code else "",
            handle=f"@{sender.username}" if sender.username else "", quoting=quoting,
        )

    def at(route: Route, **more: Any) -> Mapped:
        return Mapped(route, chat_id=msg.chat.id, thread=place.thread, lang=lang, guest_query=query, **more)

    if msg.text is not None:
        text, to_us, for_other = _strip_bot_name(msg.text, bot_username)
        if for_other:
            return at(Route.IGNORE, reason="command for another bot")
        return at(Route.SUBMIT, message=incoming(text), addressed=addressed or to_us)
    if msg.location is not None:
        label = msg.venue.title if msg.venue is not None else None
        loc = SharedLocation(msg.location.latitude, msg.location.longitude, label)
        return at(Route.SUBMIT, message=incoming("", MessageKind.LOCATION, loc), addressed=addressed)
    if any(getattr(msg, kind, None) for kind in _MEDIA):
        mentioned = f"@{bot_username}".lower() in (msg.caption or "").lower()
        return at(Route.MEDIA, addressed=addressed or mentioned, reason=_media_kind(msg))
    return at(Route.IGNORE, reason="service message")


def _replied(msg: Message) -> Message | None:
    """The message `msg` replies to; None for the topic's first message, which every message of a
    forum topic carries as its reply (the person replied to nothing)."""
    replied = msg.reply_to_message
    if replied is None or (msg.is_topic_message and (replied.message_id == msg.message_thread_id
                                                     or replied.forum_topic_created is not None)):
        return None
    return replied


def _media_kind(msg: Message) -> str:
    return next((kind for kind in _MEDIA if getattr(msg, kind, None)), "media")


def _strip_bot_name(text: str, bot_username: str) -> tuple[str, bool, bool]:
    """(text without our @name, addressed to us, a command meant for another bot)."""
    name = bot_username.lower()
    if text.startswith("/"):
        head, _, rest = text.partition(" ")
        command, _, target = head.partition("@")
        if target:
            if target.lower() != name:
                return text, False, True
            return (f"{command} {rest}".strip(), True, False)
        return text, True, False
    pattern = re.compile(rf"@{re.escape(bot_username)}\b", re.IGNORECASE)
    if pattern.search(text):
        return " ".join(pattern.sub(" ", text).split()), True, False
    return text, False, False


def _map_button(update: Update, bot_id: int) -> Mapped:
    query = update.callback_query
    assert query is not None
    sender = query.from_user
    if sender.is_bot:
        return Mapped(Route.IGNORE, reason="bot sender")
    lang = lang_of(sender.language_code)
    message = query.message
    stopped = _STOP_DATA.match(query.data or "")
    if stopped is not None and isinstance(message, Message):
        stop = IncomingMessage(
            chat=Place.of_message(message).key, user_id=str(sender.id), text="/stop",
            dedup_id=str(update.update_id), user_name=sender.full_name,
            is_group=message.chat.type in (ChatType.GROUP, ChatType.SUPERGROUP), lang=lang if sender.language_code else "",
            run=stopped.group(1),
        )
        return Mapped(Route.STOP, chat_id=message.chat.id, message=stop, lang=lang, callback_id=query.id,
                      thread=Place.of_message(message).thread)
    signed, suggested = _SIGNOFF_DATA.match(query.data or ""), _SUGGESTION_DATA.match(query.data or "")
    decided = signed or suggested
    if decided is not None and isinstance(message, Message):
        choice = {"a": "approve", "r": "reject", "y": "accept", "n": "decline"}[decided.group(1)]
        press = IncomingMessage(
            chat=Place.of_message(message).key, user_id=str(sender.id),
            text=choice, dedup_id=str(update.update_id),
            user_name=sender.full_name, kind=MessageKind.DECISION, reply_to=str(message.message_id),
            is_group=message.chat.type in (ChatType.GROUP, ChatType.SUPERGROUP), question_id=decided.group(2),
            handle=f"@{sender.username}" if sender.username else "", lang=lang if sender.language_code else "",
        )
        return Mapped(Route.DECISION, chat_id=message.chat.id, message=press, lang=lang, callback_id=query.id,
                      thread=Place.of_message(message).thread)
    rated = _FEEDBACK_DATA.match(query.data or "")
    if rated is not None and isinstance(message, Message):  # the topic's conversation, where the plan is
        press = IncomingMessage(
            chat=Place.of_message(message).key, user_id=str(sender.id),
            text="up" if rated.group(1) == "u" else "down", dedup_id=str(update.update_id), run=rated.group(2),
        )
        return Mapped(Route.FEEDBACK, chat_id=message.chat.id, message=press, lang=lang, callback_id=query.id,
                      thread=Place.of_message(message).thread)
    index = parse_button_data(query.data)
    if message is None or not isinstance(message, Message) or index is None:
        return Mapped(Route.BAD_BUTTON, chat_id=message.chat.id if message else 0, lang=lang,
                      callback_id=query.id, reason="junk callback data")
    is_group = message.chat.type in (ChatType.GROUP, ChatType.SUPERGROUP)
    incoming = IncomingMessage(
        chat=Place.of_message(message).key, user_id=str(sender.id), text="",
        dedup_id=str(update.update_id), user_name=sender.full_name, kind=MessageKind.BUTTON,
        reply_to=str(message.message_id), is_group=is_group, lang=lang if sender.language_code else "",
        handle=f"@{sender.username}" if sender.username else "",
    )
    return Mapped(Route.BUTTON, chat_id=message.chat.id, message=incoming, lang=lang,
                  callback_id=query.id, option_index=index, thread=Place.of_message(message).thread)
