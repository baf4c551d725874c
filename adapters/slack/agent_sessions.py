"""A Slack thread's agent session, moved along with the chat's state machine.

Slack's agent sessions (`agents.sessions.setStatus`, `agents.sessions.rename`) show a status and a
title for each thread the app works in, and a stop button while it is `processing`. They follow
the chat (bot.chat.machine): `processing` while a run works, `suspended` while a question (or a
sign-off) waits for a person, `active` once the plan or a stop's notice is posted, `closed` on
/new. The title is the request while there is no plan, then the trip ("Hangzhou offsite, 12–14
March").

An app that has not switched to the Agent experience has no sessions: Slack answers
`missing_scope` (declaring an app an agent adds `assistant:write`). The first such answer turns
sessions off for the workspace, logged once, and DMs get the Assistant experience's
`assistant.threads.setStatus` / `setTitle` as before. Any other refusal (a status the workspace
refuses, a thread Slack does not know) is counted in `refusals` and logged once per error; the
conversation goes on either way. Updates of one thread are sent in the order they were asked
for, each after the last one is answered, and never hold up the caller unless it awaits them.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Awaitable
from enum import StrEnum

from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.calls import SlackCalls
from adapters.slack.errors import SlackCallFailed
from adapters.slack.titles import SESSION_TITLE_LIMIT
from bot.surface import ChatKey

log = logging.getLogger(__name__)

# what Slack answers an app that is not an agent (or a Slack without agent sessions)
_NOT_AN_AGENT = frozenset({"missing_scope", "unknown_method", "not_allowed_token_type", "not_allowed"})


class SessionStatus(StrEnum):
    PROCESSING = "processing"
    SUSPENDED = "suspended"
    ACTIVE = "active"
    CLOSED = "closed"


class AgentSessions:
    def __init__(self, client: AsyncWebClient, calls: SlackCalls) -> None:
        self._client = client
        self._call = calls
        self.available: bool | None = None  # None until Slack has answered once
        self.refusals: Counter[str] = Counter()  # error code -> refused calls
        self._logged: set[str] = set()
        self._tails: dict[ChatKey, asyncio.Task[bool]] = {}

    @property
    def known_on(self) -> bool:
        """Sessions answered before: chat.stopStream may carry the session status."""
        return self.available is True

    def update(self, chat: ChatKey, status: SessionStatus, *, title: str = "", initiator: str = "",
               assistant_status: str = "") -> asyncio.Task[bool]:
        """Move the thread's session to `status` (creating it with `title` and `initiator`), after
        the updates asked for before; without sessions, `assistant_status` and `title` go to the
        Assistant thread (DMs). The task's result: whether the session took it."""
        return self._after(chat, self._set(chat, status, title, initiator, assistant_status))

    def rename(self, chat: ChatKey, title: str) -> asyncio.Task[bool]:
        return self._after(chat, self._rename(chat, title[:SESSION_TITLE_LIMIT]))

    async def settled(self, chat: ChatKey) -> None:
        """Wait until the thread's updates asked for so far are answered."""
        tail = self._tails.get(chat)
        if tail is not None:
            await asyncio.gather(tail, return_exceptions=True)

    async def close(self) -> None:
        await asyncio.gather(*self._tails.values(), return_exceptions=True)

    def _after(self, chat: ChatKey, call: Awaitable[bool]) -> asyncio.Task[bool]:
        before = self._tails.get(chat)

        async def in_turn() -> bool:
            if before is not None:
                await asyncio.gather(before, return_exceptions=True)
            return await call

        task = self._tails[chat] = asyncio.create_task(in_turn(), name=f"slack-session-{chat}")
        task.add_done_callback(lambda done: self._tails.pop(chat, None) if self._tails.get(chat) is done else None)
        return task

    async def _set(self, chat: ChatKey, status: SessionStatus, title: str, initiator: str,
                   assistant_status: str) -> bool:
        if self.available is not False:
            try:
                resp = await self._call("agents.sessions.setStatus", self._client.agents_sessions_setStatus(
                    channel_id=chat.chat_id, thread_ts=chat.thread_id, status=status.value,
                    title=title[:SESSION_TITLE_LIMIT] or None, initiator_user_id=initiator or None))
            except SlackCallFailed as exc:
                self._refused(chat, exc, status.value)
            else:
                self.available = True
                if warning := str(resp.get("warning") or ""):
                    self._once(f"warning:{warning}", "slack: agents.sessions.setStatus warns %s: subscribe the app "
                               "to agent_session_stopped (the manifest's bot_events), or Slack's stop button "
                               "does nothing", warning)
                return True
        if self.available is False and chat.chat_id.startswith("D"):
            await self._assistant(chat, title, assistant_status if status is SessionStatus.PROCESSING else "")
        return False

    async def _rename(self, chat: ChatKey, title: str) -> bool:
        if self.available is False:
            if chat.chat_id.startswith("D"):
                await self._assistant(chat, title, "")
            return False
        try:
            await self._call("agents.sessions.rename", self._client.agents_sessions_rename(
                channel_id=chat.chat_id, thread_ts=chat.thread_id, title=title))
        except SlackCallFailed as exc:
            self._refused(chat, exc, "rename")
            return False
        return True

    async def _assistant(self, chat: ChatKey, title: str, status: str) -> None:
        """The Assistant experience (apps that have not switched): a DM thread's status and title."""
        try:
            if title:
                await self._call("assistant.threads.setTitle", self._client.assistant_threads_setTitle(
                    channel_id=chat.chat_id, thread_ts=chat.thread_id, title=title))
            if status:
                await self._call("assistant.threads.setStatus", self._client.assistant_threads_setStatus(
                    channel_id=chat.chat_id, thread_ts=chat.thread_id, status=status))
        except SlackCallFailed as exc:
            log.debug("slack: %s", exc)

    def _refused(self, chat: ChatKey, exc: SlackCallFailed, what: str) -> None:
        self.refusals[exc.error] += 1
        if exc.error in _NOT_AN_AGENT and self.available is not True:
            self.available = False
            self._once("not_an_agent", "slack: no agent sessions (%s): the app is not declared an agent (manifest "
                       "`agent_view`); DMs use the Assistant experience's status instead", exc)
            return
        self._once(f"refused:{exc.error}", "slack: the agent session of %s refused %s: %s (logged once per error; "
                   "the conversation goes on)", chat, what, exc)

    def _once(self, key: str, message: str, *args: object) -> None:
        if key not in self._logged:
            self._logged.add(key)
            log.warning(message, *args)
