"""The fake Bot API's newer methods: drafts (Bot API 9.3 and 9.5, 10.0, 10.3), forum topics in what
is sent, and guest mode (10.0). A mixin of tests.fakes.telegram_api.FakeTelegram.

Sources (read, not copied): the Bot API reference and changelog (sendMessageDraft: a private
chat, a non-zero draft_id, 0-4096 characters of text since 10.0 where "" shows a "Thinking…"
placeholder, `can_stop` and `keep_on_stop` since 10.3; MessageGenerationStopped; guest_message,
answerGuestQuery with one InlineQueryResult, SentGuestMessage's inline_message_id);
python-telegram-bot's own tests (tests/test_bot.py: test_send_message_draft,
test_answer_guest_query) for the parameters it sends; "message thread not found" for a deleted or unknown topic as Telegram
answers it (tdlib/telegram-bot-api issues 447 and 847); and "bot is not a member" for a chat the
bot only visits as a guest.
"""

from __future__ import annotations

import time
from typing import Any

from tests.fakes.telegram_state import ChatState, DraftCall, StoredMessage
from tests.fakes.telegram_wire import ApiError, _bad, _json_field, _maybe_int, _message_text

_QUERY_GONE = "query is too old and response timeout expired or query ID is invalid"


class NativeMethods:
    """Bot API methods of FakeTelegram (whose state they use: chats, draft_calls, guest_queries)."""

    async def _m_sendmessagedraft(self, p: dict[str, Any]) -> bool:
        chat = self._known_chat(p)
        if chat.type != "private" or chat.id in self.refuse_drafts:
            raise _bad("TEXTDRAFT_PEER_INVALID")
        draft_id = _maybe_int(p.get("draft_id"))
        if draft_id is None or draft_id == 0:
            raise _bad("draft_id must be non-zero")
        thread = topic(chat, p)
        text = ""  # Bot API 10.0: the text may be left out or empty (the "Thinking…" placeholder)
        if str(p.get("text") or ""):
            text, _raw, _mode, _entities = _message_text(p)  # else the same 1-4096 characters as a message
        call = DraftCall(chat.id, draft_id, text, thread, flag(p, "can_stop"), flag(p, "keep_on_stop"), time.monotonic())
        self.draft_calls.append(call)
        self.drafts.setdefault(chat.id, []).append((draft_id, text, call.at))
        return True

    async def _m_answerguestquery(self, p: dict[str, Any]) -> dict[str, Any]:
        """One message into the chat the bot was summoned in, for a query not yet answered."""
        query = str(p.get("guest_query_id") or "")
        if query not in self.guest_queries or query in self.guest_answers:
            raise _bad(_QUERY_GONE)
        result = _json_field(p, "result")
        if not isinstance(result, dict) or result.get("type") != "article":
            raise _bad("RESULT_TYPE_INVALID")  # the only kind this fake answers with
        if not (1 <= len(str(result.get("id") or "").encode()) <= 64) or not str(result.get("title") or "").strip():
            raise _bad("RESULT_ID_INVALID" if not result.get("id") else "RESULT_TITLE_EMPTY")
        content = result.get("input_message_content")
        if not isinstance(content, dict) or "message_text" not in content:
            raise _bad("MESSAGE_EMPTY")
        text, raw, mode, entities = _message_text({"text": content.get("message_text"), "parse_mode": content.get("parse_mode")})
        chat_id, thread = self.guest_queries[query]
        chat = self.chats[chat_id]
        inline_id = f"AQAAA{len(self.guest_answers):05d}{query[-8:]}"
        msg = StoredMessage(message_id=chat.new_id(), chat_id=chat_id, from_bot=True, text=text, raw=raw,
                            parse_mode=mode, entities=entities, user=self.bot_user, thread=thread, inline_id=inline_id)
        chat.messages[msg.message_id] = msg
        self.guest_answers[query] = inline_id
        return {"inline_message_id": inline_id}

    def guest_message(self, inline_id: str) -> StoredMessage | None:
        return next((m for c in self.chats.values() for m in c.messages.values() if m.inline_id == inline_id), None)

    async def _edit_inline(self, p: dict[str, Any]) -> bool:
        """editMessageText of an inline message (a guest answer): True, as Telegram answers."""
        msg = self.guest_message(str(p.get("inline_message_id")))
        if msg is None:
            raise _bad("MESSAGE_ID_INVALID")
        text, raw, mode, entities = _message_text(p)
        if text == msg.text and entities == msg.entities:
            raise _bad("message is not modified: specified new message content and reply markup are exactly the "
                       "same as a current content and reply markup of the message")
        msg.edits.append(msg.text)
        msg.text, msg.raw, msg.parse_mode, msg.entities = text, raw, mode, entities
        return True


def topic(chat: ChatState, p: dict[str, Any]) -> int | None:
    """The topic a send names (message_thread_id), refused as Telegram refuses it."""
    try:
        return chat.topic_of(_maybe_int(p.get("message_thread_id")))
    except LookupError as exc:
        raise _bad(str(exc)) from None


def member_of(chat: ChatState) -> None:
    """A chat the bot only visits as a guest cannot be sent to."""
    if not chat.member:
        kind = "supergroup chat" if chat.type == "supergroup" else "group chat" if chat.type == "group" else "chat"
        raise ApiError(403, f"Forbidden: bot is not a member of the {kind}")


def flag(p: dict[str, Any], name: str) -> bool:
    """An optional Boolean parameter (JSON true/false, or its form-encoded text)."""
    value = p.get(name)
    if value is None or value in (True, False):
        return bool(value)
    if str(value).lower() in {"true", "false"}:
        return str(value).lower() == "true"
    raise _bad(f"can't parse {name} as Boolean")
