"""Is Telegram still delivering to our webhook? Asked of getWebhookInfo, at most every `every_s`.

A webhook process hears nothing when someone else set another webhook URL (or deleted it), or
when Telegram cannot reach us: getWebhookInfo then names another URL, or reports a recent
delivery error with updates piling up. Either makes /healthz say so; a check that cannot reach
Telegram at all keeps the last answer (that is the outbox's concern, not the webhook's).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from telegram import WebhookInfo
from telegram.error import TelegramError

log = logging.getLogger(__name__)

RECENT_ERROR_S = 300.0  # a delivery error this recent, with updates waiting, means we are not reached


@dataclass
class WebhookHealth:
    url: str
    info: Callable[[], Awaitable[WebhookInfo]]
    every_s: float = 30.0
    clock: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time
    _checked_at: float | None = None
    _healthy: bool = True
    problem: str = ""

    async def healthy(self) -> bool:
        now = self.clock()
        if self._checked_at is not None and now - self._checked_at < self.every_s:
            return self._healthy
        self._checked_at = now
        try:
            info = await self.info()
        except TelegramError as exc:
            log.info("getWebhookInfo failed (%s); keeping the last webhook health", exc)
            return self._healthy
        self.problem = self._problem(info)
        if self.problem and self._healthy:
            log.warning("telegram webhook: %s", self.problem)
        self._healthy = not self.problem
        return self._healthy

    def _problem(self, info: WebhookInfo) -> str:
        if info.url != self.url:
            return f"Telegram delivers to {info.url or 'no webhook'!r}, not {self.url!r}"
        error_at = info.last_error_date
        if error_at is not None and info.pending_update_count > 0 and self.wall() - error_at.timestamp() < RECENT_ERROR_S:
            return f"Telegram cannot deliver to the webhook: {info.last_error_message or 'no reason given'}"
        return ""
