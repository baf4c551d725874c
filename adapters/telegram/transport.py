"""Single Bot API requests in HTML, with the plain-text fallback when Telegram cannot parse them.

No pacing here: the caller (a chat lane) decides when a request may go and handles RetryAfter.
"""

from __future__ import annotations

import logging

from telegram import (
    Bot,
    ForceReply,
    InlineKeyboardMarkup,
    InlineQueryResultArticle,
    InputFile,
    InputTextMessageContent,
    LinkPreviewOptions,
    ReplyParameters,
    WebhookInfo,
)
from telegram.constants import ChatAction, ParseMode
from telegram.error import BadRequest

from adapters.telegram.bot_api import DraftStop
from adapters.telegram.split import html_to_plain

log = logging.getLogger(__name__)

Markup = InlineKeyboardMarkup | ForceReply | None
_NO_PREVIEW = LinkPreviewOptions(is_disabled=True)


def is_parse_error(exc: BadRequest) -> bool:
    return "can't parse entities" in str(exc).lower() or "can't find end tag" in str(exc).lower()


class Transport:
    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    async def webhook_info(self) -> WebhookInfo:
        return await self.bot.get_webhook_info()

    async def send_html(self, chat_id: int, text: str, *, markup: Markup = None,
                        reply_to: int | None = None, thread: int | None = None) -> int:
        """`thread`: the forum topic (adapters.telegram.places) the message goes to."""
        reply = ReplyParameters(reply_to, allow_sending_without_reply=True) if reply_to else None
        try:
            msg = await self.bot.send_message(chat_id, text, parse_mode=ParseMode.HTML, reply_markup=markup,
                                              reply_parameters=reply, link_preview_options=_NO_PREVIEW,
                                              message_thread_id=thread)
        except BadRequest as exc:
            if not is_parse_error(exc):
                raise
            log.warning("Telegram could not parse our HTML (%s); sending plain text", exc)
            msg = await self.bot.send_message(chat_id, html_to_plain(text), reply_markup=markup,
                                              reply_parameters=reply, link_preview_options=_NO_PREVIEW,
                                              message_thread_id=thread)
        return msg.message_id

    async def send_document(self, chat_id: int, content: bytes, filename: str, *, caption: str = "",
                            thread: int | None = None) -> int:
        msg = await self.bot.send_document(chat_id, InputFile(content, filename=filename), caption=caption[:1024] or None,
                                           message_thread_id=thread)
        return msg.message_id

    async def edit_html(self, chat_id: int, message_id: int, text: str, *, markup: InlineKeyboardMarkup | None = None) -> None:
        try:
            await self.bot.edit_message_text(text, chat_id, message_id, parse_mode=ParseMode.HTML,
                                             reply_markup=markup, link_preview_options=_NO_PREVIEW)
        except BadRequest as exc:
            if not is_parse_error(exc):
                raise
            await self.bot.edit_message_text(html_to_plain(text), chat_id, message_id, reply_markup=markup,
                                             link_preview_options=_NO_PREVIEW)

    async def draft(self, chat_id: int, draft_id: int, text: str, *, thread: int | None = None,
                    stop: DraftStop | None = None) -> None:
        """A preview of a message being written (private chats; plain text: a half-written
        answer is no well-formed HTML; "" shows Telegram's "Thinking…" placeholder, Bot API
        10.0); `stop` puts a stop button on it (Bot API 10.3, adapters.telegram.bot_api)."""
        await self.bot.send_message_draft(chat_id, draft_id, text, message_thread_id=thread,
                                          api_kwargs=stop.api_kwargs() if stop is not None else None)

    async def answer_guest(self, query_id: str, result_id: str, title: str, html: str) -> str:
        """A guest query answered with one message (Bot API 10.0, adapters.telegram.guests); its
        inline_message_id."""
        content = InputTextMessageContent(html, parse_mode=ParseMode.HTML, link_preview_options=_NO_PREVIEW)
        sent = await self.bot.answer_guest_query(query_id, InlineQueryResultArticle(result_id, title[:64] or "…", content))
        return sent.inline_message_id

    async def edit_inline(self, inline_message_id: str, html: str) -> None:
        await self.bot.edit_message_text(html, inline_message_id=inline_message_id, parse_mode=ParseMode.HTML,
                                         link_preview_options=_NO_PREVIEW)

    async def typing(self, chat_id: int, thread: int | None = None) -> None:
        await self.bot.send_chat_action(chat_id, ChatAction.TYPING, message_thread_id=thread)
