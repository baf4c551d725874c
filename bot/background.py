"""Background tasks that a component starts and must stop: cancel, then wait until it is gone.

Stopping waits, so nothing the task does can happen after `stop()` returns; the task's own
CancelledError ends there, and any other error it had already raised is not ours to raise at
shutdown (it was logged where it happened)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any


async def stop_task(task: asyncio.Task[Any] | None) -> None:
    if task is None:
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
