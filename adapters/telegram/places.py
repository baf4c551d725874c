"""Where a conversation lives on Telegram: a chat, and in it a forum topic when it has one.

A forum supergroup, and a private chat with the bot where topics are on (Bot API 9.3), keep one
conversation per topic: the topic's `message_thread_id` is the thread part of the chat key
(bot.surface.ChatKey), and everything the bot sends there names it again. Only messages marked
`is_topic_message` belong to a topic: in other supergroups a reply carries the `message_thread_id`
of its reply chain, which is no topic (Telegram answers "message thread not found" to a send that
names it), and such replies stay in the chat's one conversation.
"""

from __future__ import annotations

from dataclasses import dataclass

from telegram import Message

from bot.surface import ChatKey

PLATFORM = "telegram"
THREAD_GONE = "message thread not found"  # Telegram's answer for a topic that was deleted


@dataclass(frozen=True, slots=True)
class Place:
    chat_id: int
    thread: int | None = None  # the forum topic's message_thread_id; None: the chat itself

    @classmethod
    def of(cls, chat: ChatKey) -> Place:
        return cls(int(chat.chat_id), int(chat.thread_id) if chat.thread_id.isdigit() else None)

    @classmethod
    def of_message(cls, msg: Message) -> Place:
        topic = msg.message_thread_id if msg.is_topic_message else None
        return cls(msg.chat.id, topic or None)

    @property
    def key(self) -> ChatKey:
        return ChatKey(PLATFORM, str(self.chat_id), str(self.thread) if self.thread else "")

    @property
    def is_group(self) -> bool:
        return self.chat_id < 0

    def __str__(self) -> str:
        return f"{self.chat_id}/{self.thread}" if self.thread else str(self.chat_id)


def thread_gone(detail: str) -> bool:
    """Did Telegram refuse because the topic named was deleted?"""
    return THREAD_GONE in detail.lower()
