"""What the Slack surface posts in a conversation's thread: questions, answers, notices and
files, and the status message a run's progress edits (progress.ProgressBoard calls
`post_status` and `edit_status`).

Every Web API call goes through SlackCalls (a failure is a SlackCallFailed naming the method).
The parts an earlier attempt posted are in the thread already (the PartLog): never posted
twice. A decided sign-off closes its card instead of posting beside it; an expired one closes
every card of it the thread shows (the request, each reminder: one part each), then says so.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack import render
from adapters.slack.calls import SlackCalls
from adapters.slack.errors import SlackCallFailed
from adapters.slack.texts import lang_of, t
from bot.surface import Attachment, ChatKey, Notice, PartLog

if TYPE_CHECKING:
    from bot.sessions import SessionManager

log = logging.getLogger(__name__)


class SlackPoster:
    def __init__(self, client: AsyncWebClient, call: SlackCalls, manager: SessionManager, timezone: str) -> None:
        self._client = client
        self._call = call
        self._manager = manager
        self._timezone = timezone

    async def question(self, chat: ChatKey, post: render.SlackPost, parts: PartLog) -> None:
        resp = await self._call("chat.postMessage", self._client.chat_postMessage(
            channel=chat.chat_id, thread_ts=chat.thread_id or None, text=post.text, blocks=post.blocks,
            unfurl_links=False))
        await parts.sent(str(resp["ts"]), more=False)

    async def first_part_in(self, chat: ChatKey, ts: str, posts: Sequence[render.SlackPost], parts: PartLog) -> None:
        """The message at `ts` (the streamed answer) becomes the answer's first part."""
        await self._call("chat.update", self._client.chat_update(
            channel=chat.chat_id, ts=ts, text=posts[0].text, blocks=posts[0].blocks or None))
        await parts.sent(ts, more=len(posts) > 1)

    async def parts(self, chat: ChatKey, posts: Sequence[render.SlackPost], parts: PartLog) -> None:
        """The parts an earlier attempt posted are in the thread already: never posted twice."""
        for i in range(parts.done, len(posts)):
            resp = await self._call("chat.postMessage", self._client.chat_postMessage(
                channel=chat.chat_id, thread_ts=chat.thread_id or None, text=posts[i].text,
                blocks=posts[i].blocks or None, unfurl_links=False))
            await parts.sent(str(resp.get("ts", "")), more=i < len(posts) - 1)

    async def close_card(self, chat: ChatKey, notice: Notice, parts: PartLog) -> None:
        """A sign-off decided: its card loses its buttons and says who decided and when; the
        notice itself follows unless the card says it all (an approval)."""
        assert notice.reply_to is not None
        signoff = await self._manager.signoff(chat)
        posts = [] if signoff is not None and signoff.status == "approved" else render.notice(notice)
        if parts.done == 0:
            card = render.closed_card(render.decided_line(signoff, lang_of(notice.text), self._timezone))
            try:
                await self._call("chat.update", self._client.chat_update(
                    channel=chat.chat_id, ts=notice.reply_to, text=card.text, blocks=card.blocks))
            except SlackCallFailed as exc:  # the card is gone: the decision is said in a message instead
                if not exc.permanent:
                    raise
                log.info("slack: the sign-off card in %s was not closed: %s", chat, exc)
                posts = render.notice(notice)
            await parts.sent(notice.reply_to, more=bool(posts))
        await self._after(chat, posts, parts, 1)

    async def close_cards(self, chat: ChatKey, notice: Notice, parts: PartLog) -> None:
        """A sign-off expired: each of its cards in the thread (`notice.cards`) loses its buttons
        and says nobody decided by the deadline, one part each (a card gone is skipped); then the
        notice is posted."""
        signoff = await self._manager.signoff(chat)
        current = signoff if signoff is not None and signoff.id == notice.closes else None
        card = render.closed_card(render.decided_line(current, lang_of(notice.text), self._timezone))
        for ts in notice.cards[parts.done:]:
            try:
                await self._call("chat.update", self._client.chat_update(
                    channel=chat.chat_id, ts=ts, text=card.text, blocks=card.blocks))
            except SlackCallFailed as exc:
                if not exc.permanent:
                    raise
                log.info("slack: the sign-off card %s in %s was not closed: %s", ts, chat, exc)
            await parts.sent(ts, more=True)
        await self._after(chat, render.notice(notice), parts, len(notice.cards))

    async def _after(self, chat: ChatKey, posts: Sequence[render.SlackPost], parts: PartLog, edits: int) -> None:
        """A notice's own posts, after the row's first `edits` parts (the cards it closed)."""
        for i in range(max(parts.done - edits, 0), len(posts)):
            resp = await self._call("chat.postMessage", self._client.chat_postMessage(
                channel=chat.chat_id, thread_ts=chat.thread_id or None, text=posts[i].text,
                blocks=posts[i].blocks or None, unfurl_links=False))
            await parts.sent(str(resp.get("ts", "")), more=i < len(posts) - 1)

    async def file(self, chat: ChatKey, file: Attachment, parts: PartLog) -> None:
        if parts.done:  # shared already by an earlier attempt
            return
        resp = await self._call("files.upload_v2", self._client.files_upload_v2(
            channel=chat.chat_id, thread_ts=chat.thread_id or None, content=file.content.encode(),
            filename=file.filename, title=file.title or file.filename))
        shared = resp.get("files") or [{}]
        await parts.sent(str(shared[0].get("id", "")), more=False)

    # -- the status message -------------------------------------------------------------------
    async def post_status(self, chat: ChatKey, text: str, stop: str | None) -> str:
        resp = await self._call("chat.postMessage", self._client.chat_postMessage(
            channel=chat.chat_id, thread_ts=chat.thread_id or None, text=text, unfurl_links=False,
            blocks=render.status(text, t("stop_button", lang_of(text)), render.STOP_ACTION, stop)
            if stop is not None else None))
        return str(resp["ts"])

    async def edit_status(self, chat: ChatKey, ts: str, text: str, stop: str | None) -> None:
        """`stop`: the run the Stop button names while it works; None once it ended (no button)."""
        blocks = (render.status(text, t("stop_button", lang_of(text)), render.STOP_ACTION, stop)
                  if stop is not None else [])
        await self._call("chat.update", self._client.chat_update(channel=chat.chat_id, ts=ts, text=text, blocks=blocks))
