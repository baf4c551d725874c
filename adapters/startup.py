"""Startup failures: what could not start, in one line that names the setting to look at.

    StartupError     raised by Runtime.start (and `tripbot check`) when a part cannot start:
                     the port is taken, the database cannot be opened, a platform is
                     unreachable or refuses the token, or does not answer within the deadline

Every external service gets `STARTUP_TIMEOUT_S` to answer at startup, so a black-holed
address fails the start within seconds instead of hanging on a library's own long timeouts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")

STARTUP_TIMEOUT_S = 3.0

# where to look when a surface cannot be reached
HINTS = {
    "telegram": "check TELEGRAM_BOT_TOKEN, TELEGRAM_API_BASE_URL and the network",
    "slack": "check SLACK_BOT_TOKEN, SLACK_APP_TOKEN, SLACK_API_BASE_URL and the network",
    "web": "check BOT_HOST, BOT_PORT and BOT_WEB_TOKEN",
    "console": "",
}


class StartupError(Exception):
    """One line: what failed and which setting to look at."""


async def within(what: str, awaitable: Awaitable[T], timeout_s: float, hint: str) -> T:
    """Await `awaitable`; a time-out becomes a StartupError naming `what` and the hint."""
    try:
        return await asyncio.wait_for(awaitable, timeout_s)
    except TimeoutError:
        raise StartupError(f"{what} did not answer within {timeout_s:.1f} s ({hint})") from None


def one_line(exc: BaseException) -> str:
    """An exception as one short line (no traceback, no newlines)."""
    text = str(exc).strip().replace("\n", " ") or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."
