"""How the delivery worker retries a row: the policy, its deadline, and the wait between tries.

Transient faults are tried again until the row's deadline (a question's answer deadline; anything
else `deadline_s` after it was written), never given up for being many; the wait doubles with
jitter up to `max_delay_s`, or is the platform's own retry-after. An outage's pacing is the
breaker's (bot.delivery.breaker): a lane that met one only spreads out from the others. An error
that is not a surface's DeliveryError is a bug, given up after `unexpected_attempts`.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from tenacity import RetryCallState

from bot.store.base import LeaseLost, OutboxRow
from bot.surface import DeliveryError


@dataclass(frozen=True, slots=True)
class DeliveryPolicy:
    first_delay_s: float = 0.5  # then doubling, with jitter, up to max_delay_s
    max_delay_s: float = 60.0
    backlog_lanes: int = 4
    deadline_s: float = 86400.0  # a plan, notice or file is given up this long after it was written
    question_deadline_s: float = 86400.0  # a question: when its answer is due (BOT_HUMAN_TIMEOUT_S)
    unexpected_attempts: int = 8  # an error that is not a surface's DeliveryError is a bug: give up sooner
    breaker_trip_after: int = 3  # outage failures in a row that pause a platform's lanes


class DeadlinePassed(DeliveryError):
    def __init__(self, kind: str, deadline_s: float) -> None:
        super().__init__(f"the {kind} could not be delivered before its deadline ({deadline_s:.0f} s after it was "
                         "written)", permanent=True)


def is_transient(exc: BaseException) -> bool:
    """Worth another try. Cancellation is not an error: tenacity sees every BaseException."""
    return isinstance(exc, Exception) and not isinstance(exc, LeaseLost) and not (
        isinstance(exc, DeliveryError) and exc.permanent)


def is_outage(exc: BaseException) -> bool:
    return isinstance(exc, DeliveryError) and exc.outage


@dataclass
class StopAtDeadline:
    """Stop at the row's deadline; an unexpected error (a bug, not the platform) after a few tries."""

    policy: DeliveryPolicy

    def __call__(self, state: RetryCallState) -> bool:
        row: OutboxRow = state.args[2]
        exc = state.outcome.exception() if state.outcome is not None else None
        if not isinstance(exc, DeliveryError) and state.attempt_number >= self.policy.unexpected_attempts:
            return True
        return time.time() >= row_deadline(self.policy, row)


def row_deadline(policy: DeliveryPolicy, row: OutboxRow) -> float:
    """Wall time after which the row is given up."""
    return row.created_at + (policy.question_deadline_s if row.kind == "question" else policy.deadline_s)


@dataclass
class Backoff:
    """Backoff with jitter, or the platform's own retry-after when it gave one."""

    policy: DeliveryPolicy

    def __call__(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        if isinstance(exc, DeliveryError) and exc.retry_after is not None:
            return exc.retry_after
        if exc is not None and is_outage(exc):  # the breaker paces a platform's outage; this only spreads the lanes out
            return self.policy.first_delay_s * (0.5 + random.random() / 2)
        delay = min(self.policy.max_delay_s, self.policy.first_delay_s * 2 ** (state.attempt_number - 1))
        return delay * (0.5 + random.random() / 2)
