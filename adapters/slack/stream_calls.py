"""The Web API calls behind adapters.slack.streaming (its StreamApi), and what a Stop's notice
keeps of the text already streamed into the thread."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from adapters.slack.mrkdwn import to_mrkdwn
from adapters.slack.streaming import Chunk, Streamed
from bot.surface import ChatKey, Notice

Call = Callable[[str, Awaitable[AsyncSlackResponse]], Awaitable[dict[str, Any]]]


class SlackStreamCalls:
    """chat.startStream / appendStream / stopStream, and the chat.postMessage + chat.update
    fallback. In a channel a stream is for the asker of its team; a DM needs no recipient."""

    def __init__(self, client: AsyncWebClient, call: Call, team_id: Callable[[], str]) -> None:
        self._client = client
        self._call = call
        self._team_id = team_id

    async def start(self, chat: ChatKey, text: str, recipient: str, tasks: Sequence[Chunk] = (),
                    mode: str | None = None) -> str:
        in_channel = not chat.chat_id.startswith("D")
        text_arg, chunks = _content(text, tasks)
        resp = await self._call("chat.startStream", self._client.chat_startStream(
            channel=chat.chat_id, thread_ts=chat.thread_id, markdown_text=text_arg, chunks=chunks,
            task_display_mode=mode,
            recipient_user_id=recipient if in_channel else None,
            recipient_team_id=self._team_id() if in_channel else None))
        return str(resp["ts"])

    async def append(self, chat: ChatKey, ts: str, text: str, tasks: Sequence[Chunk] = ()) -> None:
        text_arg, chunks = _content(text, tasks)
        await self._call("chat.appendStream", self._client.chat_appendStream(
            channel=chat.chat_id, ts=ts, markdown_text=text_arg, chunks=chunks))

    async def stop(self, chat: ChatKey, ts: str, session_status: str | None = None) -> None:
        await self._call("chat.stopStream", self._client.chat_stopStream(channel=chat.chat_id, ts=ts,
                                                                         session_status=session_status))

    async def post(self, chat: ChatKey, text: str) -> str:
        resp = await self._call("chat.postMessage", self._client.chat_postMessage(
            channel=chat.chat_id, thread_ts=chat.thread_id or None, text=to_mrkdwn(text), unfurl_links=False))
        return str(resp["ts"])

    async def update(self, chat: ChatKey, ts: str, text: str) -> None:
        await self._call("chat.update", self._client.chat_update(channel=chat.chat_id, ts=ts, text=to_mrkdwn(text)))


def _content(text: str, tasks: Sequence[Chunk]) -> tuple[str | None, list[Chunk] | None]:
    """A stream call's content: the text alone as `markdown_text`; with task updates, every
    piece as a chunk, the text first (it was written before the tools were called)."""
    if not tasks:
        return text, None
    return None, [*([{"type": "markdown_text", "text": text}] if text else []), *tasks]


def without_streamed(notice: Notice, streamed: Streamed | None) -> Notice:
    """A Stop's notice repeats the text written so far (for surfaces whose preview vanishes);
    in Slack that text is in the thread already."""
    if streamed is None or streamed.ts is None or not streamed.text.strip():
        return notice
    head = f"{streamed.text.strip()} …"
    if not notice.text.startswith(head):
        return notice
    return Notice(notice.kind, notice.text[len(head):].strip() or notice.text, notice.reply_to)
