"""What a chat's actor is given (bot.chat.actor, bot.run.outcome, bot.team.signoff_steps), and how the
stored state reads: the chat's machine state, and the one `/status` and the web page show."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from bot.chat.machine import ChatState
from bot.observe.log_context import ChatLogContext
from bot.observe.metrics import Metrics
from bot.run.driver import RunDriver
from bot.settings import Settings
from bot.store.base import OutboxRow, SessionRow, Store
from bot.surface import ChatKey


async def _nobody_known(chat: ChatKey) -> frozenset[str] | None:
    return None


@dataclass(frozen=True, slots=True)
class ActorDeps:
    store: Store
    driver: RunDriver
    settings: Settings
    metrics: Metrics
    deliver: Callable[[str, Sequence[OutboxRow]], None]  # rows were queued for the chat (as stored)
    question_stored: Callable[[float], None]  # a deadline to watch
    logs: ChatLogContext
    # whether the chat's surface can carry a sign-off (bot.surface.Surface.signs_off)
    signs_off: Callable[[ChatKey], bool]
    clock: Callable[[], float] = time.time
    # the chat's members, where the surface can tell (sign-off: an approver who left the channel)
    members: Callable[[ChatKey], Awaitable[frozenset[str] | None]] = _nobody_known


def state_of(session: SessionRow | None) -> ChatState:
    return ChatState.CLOSED if session is None else ChatState(session.state)


def state_with_run(session: SessionRow | None, run_alive: bool) -> str:
    """What /status and the web page call the chat's state: `parked` is asking with nothing held."""
    state = state_of(session)
    if state is ChatState.ASKING and not run_alive:
        return "parked"
    return "idle" if state is ChatState.CLOSED else state.value
