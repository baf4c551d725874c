"""Slack's agent sessions for the fake Web API (tests.fakes.slack_api.FakeSlack): the methods
`agents.sessions.setStatus` and `agents.sessions.rename`, `session_status` on `chat.stopStream`,
and the native stop button a session shows while it is processing.

Built from Slack's API reference (docs.slack.dev: the methods agents.sessions.setStatus and
agents.sessions.rename, the event agent_session_stopped, the "Agent sessions" guide), from
slack-sdk 3.48's typed methods (`agents_sessions_setStatus(channel_id, status, thread_ts, title,
initiator_user_id, ...)`, `agents_sessions_rename(channel_id, title, thread_ts)`,
`chat_stopStream(..., session_status)`), and from the response sample of java-slack-sdk's
json-logs (`ok, warning, error, needed, provided, status, agent_status, title`).

As documented: a status is one of active, processing, suspended, closed (`invalid_arguments`
otherwise); a thread-based session names its thread's root (`thread_not_found`); a title has at
most 200 characters (a rename's 1 to 200); only an app declared as an agent may have sessions,
and declaring it adds the `assistant:write` scope, so an app that is not one is answered
`missing_scope` with `needed: assistant:write`; while the app is not subscribed to
`agent_session_stopped`, setStatus succeeds with the warning
`missing_agent_session_stopped_event_subscription`; the initiator must be a member of the
channel. A press of the stop button stops the app's streams in the thread and sends
`agent_session_stopped` {channel, thread_ts, user, event_ts, streaming_message_ts}; the status
does not change by itself. Chosen here where the reference says nothing: a rename of a thread
without a session answers `session_not_found`; `refuse` makes a status answer the error a test
names (a workspace that refuses it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

STATUSES = ("active", "processing", "suspended", "closed")
TITLE_LIMIT = 200
STOP_EVENT = "agent_session_stopped"
UNSUBSCRIBED_WARNING = "missing_agent_session_stopped_event_subscription"


class AgentsApiError(Exception):
    """An error answer: `error`, and the extra fields Slack sends with it (needed, provided)."""

    def __init__(self, error: str, **extra: str) -> None:
        super().__init__(error)
        self.error = error
        self.extra = extra


@dataclass
class AgentSession:
    channel: str
    thread_ts: str
    status: str
    title: str = ""
    initiator: str = ""
    history: list[str] = field(default_factory=list)  # every status it was given, in order


class Threads(Protocol):
    """What the sessions need of the fake's messages."""

    def thread_root(self, channel: str, ts: str) -> str: ...

    def open_streams(self, channel: str, thread_ts: str) -> list[Any]: ...

    def channel_members(self, channel: str) -> list[str] | None: ...


class AgentSessions:
    def __init__(self, threads: Threads, channel_of: Callable[[dict[str, Any], str], str]) -> None:
        self._threads = threads
        self._channel_of = channel_of
        self.agent_app = True  # the app is declared an agent (manifest `agent_view`)
        self.bot_events: set[str] | None = None  # the events it subscribes to; None: all of them
        self.refuse: dict[str, str] = {}  # status -> the error a workspace answers for it
        self.sessions: dict[tuple[str, str], AgentSession] = {}

    def session(self, channel: str, thread_ts: str) -> AgentSession | None:
        return self.sessions.get((channel, thread_ts))

    def statuses(self, channel: str, thread_ts: str) -> list[str]:
        found = self.session(channel, thread_ts)
        return list(found.history) if found else []

    # -- methods ---------------------------------------------------------------------------
    def set_status(self, args: dict[str, Any]) -> dict[str, Any]:
        self._agent_only()
        status = args.get("status")
        if status not in STATUSES:
            raise AgentsApiError("invalid_arguments")
        channel, thread = self._thread(args)
        title = args.get("title")
        if title is not None and (not isinstance(title, str) or len(title) > TITLE_LIMIT):
            raise AgentsApiError("invalid_arguments")
        initiator = args.get("initiator_user_id")
        members = self._threads.channel_members(channel)
        if isinstance(initiator, str) and members is not None and initiator not in members:
            raise AgentsApiError("user_not_in_channel")
        if status in self.refuse:
            raise AgentsApiError(self.refuse[status])
        found = self.sessions.get((channel, thread))
        if found is None:  # created: the title and initiator count only now
            found = self.sessions[(channel, thread)] = AgentSession(
                channel, thread, status, title or "", initiator if isinstance(initiator, str) else "")
        found.status = status
        found.history.append(status)
        out: dict[str, Any] = {"status": status, "agent_status": status, "title": found.title}
        if self.bot_events is not None and STOP_EVENT not in self.bot_events:
            out["warning"] = UNSUBSCRIBED_WARNING
            out["response_metadata"] = {"warnings": [UNSUBSCRIBED_WARNING]}
        return out

    def rename(self, args: dict[str, Any]) -> dict[str, Any]:
        self._agent_only()
        channel, thread = self._thread(args)
        title = args.get("title")
        if not isinstance(title, str) or not title.strip() or len(title) > TITLE_LIMIT:
            raise AgentsApiError("invalid_arguments")
        found = self.sessions.get((channel, thread))
        if found is None:
            raise AgentsApiError("session_not_found")
        found.title = title
        return {"title": title}

    def stream_stopped(self, channel: str, thread_ts: str, status: object) -> None:
        """chat.stopStream's `session_status`: checked before the stream stops, applied after."""
        if status is None:
            return
        self._agent_only()
        if status not in STATUSES:
            raise AgentsApiError("invalid_arguments")
        if status in self.refuse:
            raise AgentsApiError(self.refuse[status])
        found = self.sessions.get((channel, thread_ts))
        if found is not None:
            found.status = str(status)
            found.history.append(str(status))

    # -- the person's side -----------------------------------------------------------------
    def press_stop(self, channel: str, thread_ts: str, user: str) -> dict[str, Any]:
        """The stop button, shown only while the session is processing: Slack stops the app's
        streams in the thread and sends this event (the status stays as it is)."""
        found = self.sessions.get((channel, thread_ts))
        if found is None or found.status != "processing":
            raise AssertionError(f"no stop button: the session of {channel}/{thread_ts} is not processing")
        stopped = []
        for msg in self._threads.open_streams(channel, thread_ts):
            msg.stream = "stopped"
            stopped.append(msg.ts)
        return {"type": STOP_EVENT, "channel": channel, "thread_ts": thread_ts, "user": user,
                "event_ts": f"{time.time():.6f}", "streaming_message_ts": stopped}

    def _agent_only(self) -> None:
        if not self.agent_app:
            raise AgentsApiError("missing_scope", needed="assistant:write", provided="chat:write")

    def _thread(self, args: dict[str, Any]) -> tuple[str, str]:
        channel = self._channel_of(args, "channel_id")
        thread = args.get("thread_ts")
        if not isinstance(thread, str) or not thread:
            raise AgentsApiError("invalid_arguments")  # thread-based sessions need their thread
        return channel, self._threads.thread_root(channel, thread)
