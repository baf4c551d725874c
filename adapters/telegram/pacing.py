"""Sending within Telegram's limits: one lane per chat (lane.py), one pacer for the whole bot
(pacer.py), and the Outbox here that holds them.

A lane runs its chat's sends one at a time, in order, with at least `interval` seconds between
the end of one request and the start of the next (so arrivals at Telegram are at least that far
apart), and waits out every RetryAfter before trying the same request again. Questions, answers
and notices are jobs that must be delivered; progress is a *source* polled for its latest state,
so edits that pile up during a wait collapse into one. The pacer caps the whole bot at `limit`
requests per `window` seconds and serves urgent jobs before progress.
Figures are Telegram's seconds, each `time_scale` of ours (BOT_PLATFORM_TIME_SCALE: 1.0 for the
real service; the tests' fake runs on a faster clock and the bot on the same one).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from adapters.telegram.lane import ChatLane, Delivery, Observer, ProgressSource
from adapters.telegram.pacer import GlobalPacer


class Outbox:
    """All lanes of one bot (intervals and window given in Telegram's seconds, kept in ours)."""

    def __init__(self, *, private_interval: float = 1.0, group_interval: float = 3.0, draft_interval: float = 0.5,
                 global_limit: int = 29, global_window: float = 1.0, observer: Observer | None = None,
                 time_scale: float = 1.0) -> None:
        if not time_scale > 0:
            raise ValueError(f"time_scale must be above 0, not {time_scale}")
        self.time_scale = time_scale
        self.private_interval = private_interval * time_scale
        self.group_interval = group_interval * time_scale
        self.draft_interval = draft_interval * time_scale
        self.pacer = GlobalPacer(global_limit, global_window * time_scale)
        self.observers: list[Observer] = [observer] if observer is not None else []
        self._lanes: dict[int, ChatLane] = {}
        # drafts are previews, not messages: their own lane per chat, so the first piece of an
        # answer never waits behind the chat's message interval (the global pacer still counts them)
        self._draft_lanes: dict[int, ChatLane] = {}

    def draft_lane(self, chat_id: int) -> ChatLane:
        lane = self._draft_lanes.get(chat_id)
        if lane is None:
            if len(self._draft_lanes) > 4096:
                self._prune(self._draft_lanes)
            lane = self._draft_lanes[chat_id] = ChatLane(chat_id, self.draft_interval, self.pacer, self._notify,
                                                         time_scale=self.time_scale)
        return lane

    def offer_draft(self, chat_id: int, source: ProgressSource) -> None:
        """A preview is worth sending only when it delays no real message: while the bot-wide
        budget is taken, the draft waits for the next piece of text (the answer itself is sent
        as messages anyway)."""
        if self.pacer.contended():
            return
        self.draft_lane(chat_id).offer(source)

    def lane(self, chat_id: int) -> ChatLane:
        lane = self._lanes.get(chat_id)
        if lane is None:
            if len(self._lanes) > 4096:
                self._prune(self._lanes)
            # negative ids are groups, supergroups and channels: 20 messages a minute there
            interval = self.group_interval if chat_id < 0 else self.private_interval
            lane = self._lanes[chat_id] = ChatLane(chat_id, interval, self.pacer, self._notify,
                                                   time_scale=self.time_scale)
        return lane

    def _notify(self, delivery: Delivery) -> None:
        for observer in self.observers:
            observer(delivery)

    @staticmethod
    def _prune(lanes: dict[int, ChatLane]) -> None:
        now = time.monotonic()
        for cid, lane in list(lanes.items()):
            if not lane.busy and lane.next_at < now:
                del lanes[cid]

    async def send(self, chat_id: int, kind: str, run: Callable[[], Awaitable[Any]]) -> Any:
        return await self.lane(chat_id).submit(kind, run)

    def offer(self, chat_id: int, source: ProgressSource) -> None:
        self.lane(chat_id).offer(source)

    async def close(self) -> None:
        lanes = [*self._lanes.values(), *self._draft_lanes.values()]
        await asyncio.gather(*(lane.close() for lane in lanes))
