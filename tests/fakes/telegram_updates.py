"""What people do in the fake Telegram: each action becomes an Update shaped like the real ones."""

from __future__ import annotations

import dataclasses
import itertools
import random
from typing import Any

from tests.fakes.telegram_state import ChatState, DraftCall, FakeUser, StoredMessage

# Telegram's default: every update type but chat_member, message_reaction and message_reaction_count
_DEFAULT_ALLOWED = {"message", "edited_message", "channel_post", "edited_channel_post", "callback_query",
                    "inline_query", "chosen_inline_result", "shipping_query", "pre_checkout_query",
                    "poll", "poll_answer", "my_chat_member", "chat_join_request", "guest_message",
                    "stopped_message_generation"}
TOPIC_ICON_COLOR = 7322096  # one of the six colours Telegram gives a new topic


class UpdateFactory:
    def __init__(self, *, bot_id: int, bot_username: str) -> None:
        self.bot_id = bot_id
        self.bot_username = bot_username
        self.chats: dict[int, ChatState] = {}
        self.pending: list[dict[str, Any]] = []
        self.allowed_updates: list[str] | None = None
        self.open_queries: set[str] = set()
        self.discarded: list[dict[str, Any]] = []
        self.history: dict[int, dict[str, Any]] = {}  # every update ever made, by update_id
        self.draft_calls: list[DraftCall] = []  # every sendMessageDraft accepted, in order
        self.guest_queries: dict[str, tuple[int, int | None]] = {}  # guest_query_id -> (chat, topic)
        self.guest_answers: dict[str, str] = {}  # guest_query_id -> the answer's inline_message_id
        self._update_ids = itertools.count(700_000)

    # ------------------------------------------------------------------ people act

    def send_text(self, chat_id: int, text: str, *, user_id: int | None = None, first_name: str = "Ann",
                  lang: str | None = "en", reply_to: int | None = None, from_bot: bool = False,
                  no_from: bool = False, chat_type: str | None = None, thread: int | None = None) -> int:
        """`thread`: a forum topic of the chat (create_topic); the message then "replies" to the
        topic's first message unless it replies to another, as in Telegram."""
        return self._user_message(chat_id, {"text": text, **_entities(text)}, user_id=user_id,
                                  first_name=first_name, lang=lang, reply_to=reply_to,
                                  from_bot=from_bot, no_from=no_from, chat_type=chat_type, stored_text=text,
                                  thread=thread)

    def create_topic(self, chat_id: int, name: str, *, chat_type: str | None = None, user_id: int | None = None,
                     by_bot: bool = False) -> int:
        """A forum topic (a supergroup turns into a forum; in a private chat, the bot's topics),
        opened by a person or, `by_bot`, by the bot (createForumTopic): its message_thread_id, the
        id of the service message that opened it."""
        chat = self._chat(chat_id, chat_type)
        chat.forum = True
        user = FakeUser(user_id if user_id is not None else abs(chat_id), username=f"user{user_id or abs(chat_id)}")
        root = StoredMessage(message_id=chat.new_id(), chat_id=chat_id, from_bot=by_bot, text="",
                             user=FakeUser(self.bot_id, "Trip Test", self.bot_username, None, is_bot=True) if by_bot else user,
                             kind="topic_created", topic_name=name)
        root.thread = root.message_id
        chat.messages[root.message_id] = root
        chat.topics[root.message_id] = name
        if not by_bot:  # a bot gets no update of what it did itself
            self._enqueue({"message": self.message_wire(chat, root)})
        return root.message_id

    def delete_topic(self, chat_id: int, thread: int) -> None:
        """The topic and its messages are gone: sending there is "message thread not found"."""
        chat = self.chats[chat_id]
        chat.topics.pop(thread, None)
        chat.deleted_topics.add(thread)
        for mid in [m.message_id for m in chat.messages.values() if m.thread == thread]:
            del chat.messages[mid]

    def stop_draft(self, chat_id: int, draft_id: int) -> int:
        """The person presses the stop button of a draft (Bot API 10.3: shown only when the draft
        was sent with can_stop); the bot gets stopped_message_generation."""
        call = next((c for c in reversed(self.draft_calls) if c.chat_id == chat_id and c.draft_id == draft_id), None)
        if call is None or not call.can_stop:
            raise AssertionError(f"draft {draft_id} in chat {chat_id} shows no stop button")
        chat = self.chats[chat_id]
        stopped: dict[str, Any] = {"chat": chat.wire(FakeUser(chat_id)), "draft_id": draft_id}
        if call.thread is not None:
            stopped["message_thread_id"] = call.thread
        return self._enqueue({"stopped_message_generation": stopped})

    def send_guest_text(self, chat_id: int, text: str, *, user_id: int, chat_type: str = "supergroup",
                        lang: str | None = "en", thread: int | None = None) -> int:
        """A person summons the bot by its @username in a chat it is no member of (Bot API 10.0
        guest mode): the bot gets guest_message, with a query it may answer once."""
        chat = self._chat(chat_id, chat_type)
        chat.member = False
        user = FakeUser(user_id, "Ann", f"user{user_id}", lang)
        msg = StoredMessage(message_id=chat.new_id(), chat_id=chat_id, from_bot=False, text=text, raw=text,
                            user=user, thread=thread)
        chat.messages[msg.message_id] = msg
        query = f"{random.getrandbits(63)}"
        self.guest_queries[query] = (chat_id, thread)
        wire = self.message_wire(chat, msg)
        wire.update({"guest_query_id": query, **_mention(text, self.bot_username)})
        return self._enqueue({"guest_message": wire})

    def send_location(self, chat_id: int, latitude: float, longitude: float, *, user_id: int | None = None,
                      lang: str | None = "en", venue: str | None = None) -> int:
        loc = {"latitude": latitude, "longitude": longitude}
        body: dict[str, Any] = {"location": loc}
        if venue:
            body["venue"] = {"location": loc, "title": venue, "address": f"{venue} address"}
        return self._user_message(chat_id, body, user_id=user_id, lang=lang, kind="location")

    def send_sticker(self, chat_id: int, *, user_id: int | None = None, lang: str | None = "en") -> int:
        sticker = {"file_id": "CAACAgIAAx0", "file_unique_id": "AgAD", "type": "regular", "width": 512,
                   "height": 512, "is_animated": False, "is_video": False, "emoji": "👍"}
        return self._user_message(chat_id, {"sticker": sticker}, user_id=user_id, lang=lang, kind="sticker")

    def send_photo(self, chat_id: int, *, user_id: int | None = None, lang: str | None = "en",
                   caption: str | None = None) -> int:
        photo = [{"file_id": "AgACAgIAAx0", "file_unique_id": "AQAD", "width": 90, "height": 90, "file_size": 1200}]
        body: dict[str, Any] = {"photo": photo}
        if caption:
            body["caption"] = caption
        return self._user_message(chat_id, body, user_id=user_id, lang=lang, kind="photo")

    def send_voice(self, chat_id: int, *, user_id: int | None = None, lang: str | None = "en") -> int:
        voice = {"file_id": "AwACAgIAAx0", "file_unique_id": "AgADv", "duration": 3, "mime_type": "audio/ogg"}
        return self._user_message(chat_id, {"voice": voice}, user_id=user_id, lang=lang, kind="voice")

    def edit_user_message(self, chat_id: int, message_id: int, text: str) -> int:
        chat = self.chats[chat_id]
        msg = chat.messages[message_id]
        msg.edits.append(msg.text)
        msg.text = text
        wire = self.message_wire(chat, msg)
        wire["edit_date"] = msg.date + 1
        return self._enqueue({"edited_message": wire})

    def press_button(self, chat_id: int, message_id: int, *, user_id: int | None = None,
                     index: int | None = None, data: str | None = None, lang: str | None = "en") -> int:
        """Press the index-th inline button of a bot message, or send raw `data` (junk, old buttons)."""
        chat = self.chats[chat_id]
        msg = chat.messages[message_id]
        if data is None:
            buttons = [b for row in (msg.reply_markup or {}).get("inline_keyboard", []) for b in row]
            data = str(buttons[index or 0]["callback_data"])
        user = FakeUser(user_id if user_id is not None else chat_id, language_code=lang)
        qid = str(random.getrandbits(63))
        self.open_queries.add(qid)
        query = {"id": qid, "from": user.wire(), "message": self.message_wire(chat, msg),
                 "chat_instance": str(-chat_id * 7), "data": data}
        return self._enqueue({"callback_query": query})

    def redeliver(self, update_id: int) -> None:
        """Deliver an update again, as Telegram does when a webhook delivery was not acknowledged."""
        self.pending.append(dict(self.history[update_id]))
        self._after_enqueue()

    # ------------------------------------------------------------------ plumbing

    def _after_enqueue(self) -> None:
        """Hook for the server: wake long polls and the webhook deliverer."""

    def _chat(self, chat_id: int, chat_type: str | None = None) -> ChatState:
        chat = self.chats.get(chat_id)
        if chat is None:
            kind = chat_type or ("private" if chat_id > 0 else "supergroup")
            chat = ChatState(chat_id, kind, None if kind == "private" else f"Trip group {chat_id}")
            self.chats[chat_id] = chat
        return chat

    def _user_message(self, chat_id: int, body: dict[str, Any], *, user_id: int | None = None,
                      first_name: str = "Ann", lang: str | None = "en", reply_to: int | None = None,
                      from_bot: bool = False, no_from: bool = False, chat_type: str | None = None,
                      kind: str = "text", stored_text: str = "", thread: int | None = None) -> int:
        chat = self._chat(chat_id, chat_type)
        if thread is not None and thread not in chat.topics:
            raise AssertionError(f"chat {chat_id} has no open topic {thread}: nobody can write there")
        user = FakeUser(user_id if user_id is not None else abs(chat_id), first_name,
                        f"user{user_id or abs(chat_id)}", lang, is_bot=from_bot)
        msg = StoredMessage(message_id=chat.new_id(), chat_id=chat_id, from_bot=False, text=stored_text,
                            raw=stored_text, user=None if no_from else user, kind=kind,
                            reply_to=reply_to if reply_to is not None else thread, thread=thread)
        chat.messages[msg.message_id] = msg
        wire = self.message_wire(chat, msg)
        wire.update(body)
        return self._enqueue({"message": wire})

    def message_wire(self, chat: ChatState, msg: StoredMessage) -> dict[str, Any]:
        out: dict[str, Any] = {"message_id": msg.message_id, "date": msg.date, "chat": chat.wire(msg.user)}
        if msg.user is not None:
            out["from"] = msg.user.wire()
        if msg.kind == "text":
            out["text"] = msg.text
            if msg.entities:
                out["entities"] = [{"type": e.type, "offset": e.offset, "length": e.length,
                                    **({"url": e.url} if e.url else {})} for e in msg.entities]
        if msg.document is not None:
            out["document"] = msg.document.wire()
            if msg.text:
                out["caption"] = msg.text
        if msg.reply_markup and "inline_keyboard" in msg.reply_markup:
            out["reply_markup"] = msg.reply_markup
        if msg.thread is not None:  # in a forum topic (or a topic of a private chat with the bot)
            out["message_thread_id"] = msg.thread
            out["is_topic_message"] = True
        if msg.kind == "topic_created":
            out["forum_topic_created"] = {"name": msg.topic_name, "icon_color": TOPIC_ICON_COLOR}
        if msg.reply_to is not None and msg.reply_to in chat.messages:
            replied = chat.messages[msg.reply_to]  # one level deep, as Telegram sends it
            out["reply_to_message"] = self.message_wire(chat, dataclasses.replace(replied, reply_to=None))
        return out

    def _enqueue(self, update: dict[str, Any]) -> int:
        update_id = next(self._update_ids)
        update = {"update_id": update_id, **update}
        self.history[update_id] = update
        kind = next(k for k in update if k != "update_id")
        allowed = set(self.allowed_updates) if self.allowed_updates else _DEFAULT_ALLOWED
        if kind in allowed:
            self.pending.append(update)
        else:
            self.discarded.append(update)
        self._after_enqueue()
        return update_id


def _mention(text: str, bot_username: str) -> dict[str, Any]:
    """The mention entity of the bot's @username in a guest message."""
    at = text.lower().find(f"@{bot_username.lower()}")
    return {"entities": [{"type": "mention", "offset": at, "length": len(bot_username) + 1}]} if at >= 0 else {}


def _entities(text: str) -> dict[str, Any]:
    """Telegram marks a leading /command (with an optional @bot suffix) as a bot_command entity."""
    if not text.startswith("/"):
        return {}
    end = len(text.split()[0]) if text.split() else 0
    return {"entities": [{"type": "bot_command", "offset": 0, "length": end}]} if end > 1 else {}
