"""Per-session logs of SSE events, so a reconnect with Last-Event-ID replays what it missed.

An event id is `<epoch>-<seq>`: `epoch` names one log (it changes when the process restarts or
the log is evicted), `seq` counts up within it. An id from another epoch, or one older than the
oldest event still kept, cannot be resumed exactly; the stream then starts with a `reset` event
telling the page to rebuild from `GET /api/sessions/{id}`.

Memory is bounded twice: each log keeps its last `max_events`, and the book keeps at most
`max_sessions` logs, evicting the least recently used ones that nobody is listening to.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import OrderedDict, deque
from dataclasses import dataclass

from sse_starlette import ServerSentEvent

from adapters.web.replay import Segment


@dataclass(frozen=True, slots=True)
class LoggedEvent:
    seq: int
    id: str
    event: str
    data: str  # JSON text
    produced_at: float  # time.time() when the surface produced it
    wire: bytes  # the encoded SSE frame, built once however many clients read it


@dataclass(frozen=True, slots=True)
class Replay:
    events: list[LoggedEvent]
    gap: bool  # the client missed events that are no longer (or never were) in this log


class SessionLog:
    def __init__(self, session_id: str, max_events: int) -> None:
        self.session_id = session_id
        self.epoch = secrets.token_hex(4)
        self._events: deque[LoggedEvent] = deque(maxlen=max_events)
        self._next_seq = 1
        self._changed = asyncio.Event()
        self.subscribers = 0
        self.closed = False
        # adapters.web.relay (several processes): the last shared event read into this log
        self.relayed = 0
        self.relay_lock = asyncio.Lock()
        self.segment = Segment()  # the run segment going on, for a page that reloads (adapters.web.replay)

    @property
    def last_id(self) -> str:
        return f"{self.epoch}-{self._next_seq - 1}"

    @property
    def last_seq(self) -> int:
        return self._next_seq - 1

    def append(self, event: str, data: str) -> LoggedEvent:
        seq = self._next_seq
        self._next_seq += 1
        event_id = f"{self.epoch}-{seq}"
        wire = ServerSentEvent(data, event=event, id=event_id).encode()
        logged = LoggedEvent(seq, event_id, event, data, time.time(), wire)
        self._events.append(logged)
        self.segment.add(event, data)
        self._wake()
        return logged

    def kept(self) -> list[LoggedEvent]:
        """The events still kept, oldest first."""
        return list(self._events)

    def close(self) -> None:
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        # Waiters hold the old Event; a fresh one serves the next round.
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def replay(self, last_event_id: str | None) -> Replay:
        """What a client that saw `last_event_id` (None: nothing) still needs."""
        if not last_event_id:
            first = self._events[0].seq if self._events else self._next_seq
            return Replay(list(self._events), gap=first > 1)
        epoch, _, raw_seq = last_event_id.strip().rpartition("-")
        if epoch != self.epoch or not raw_seq.isdigit() or int(raw_seq) >= self._next_seq:
            return Replay([], gap=True)
        return self._after(int(raw_seq))

    def _after(self, seq: int) -> Replay:
        first = self._events[0].seq if self._events else self._next_seq
        return Replay([e for e in self._events if e.seq > seq], gap=first > seq + 1)

    def after(self, seq: int) -> list[LoggedEvent]:
        if self.last_seq <= seq:
            return []
        return [e for e in self._events if e.seq > seq]

    async def wait_after(self, seq: int) -> None:
        """Return once an event newer than `seq` exists or the log is closed."""
        while self.last_seq <= seq and not self.closed:
            await self._changed.wait()


class EventLogBook:
    def __init__(self, *, max_sessions: int = 5000, max_events: int = 500) -> None:
        self._logs: OrderedDict[str, SessionLog] = OrderedDict()
        self._max_sessions = max_sessions
        self._max_events = max_events

    def __len__(self) -> int:
        return len(self._logs)

    def get(self, session_id: str) -> SessionLog:
        log = self._logs.get(session_id)
        if log is None:
            log = SessionLog(session_id, self._max_events)
            self._logs[session_id] = log
            self._evict()
        else:
            self._logs.move_to_end(session_id)
        return log

    def peek(self, session_id: str) -> SessionLog | None:
        return self._logs.get(session_id)

    def listened(self) -> list[SessionLog]:
        """The logs an event stream reads now."""
        return [log for log in self._logs.values() if log.subscribers > 0]

    def close_all(self) -> None:
        for log in self._logs.values():
            log.close()

    def _evict(self) -> None:
        excess = len(self._logs) - self._max_sessions
        if excess <= 0:
            return
        for session_id in [sid for sid, log in self._logs.items() if log.subscribers == 0][:excess]:
            del self._logs[session_id]
