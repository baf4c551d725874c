"""Running a fake (or a bot under test) as its own process: start it, print where it listens, serve until SIGTERM."""

from __future__ import annotations

import asyncio
import json
import signal
from typing import Any, Protocol


class Fake(Protocol):
    async def start(self) -> Any: ...
    async def close(self) -> None: ...


async def until_signalled() -> None:
    """Return when the process gets SIGTERM or SIGINT (how the parent asks a child to stop)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()


async def serve_until_signalled(fake: Fake, info: dict[str, Any]) -> None:
    """Start `fake`, print `info` as one JSON line (the parent reads it), stop on SIGTERM/SIGINT.

    Values of `info` may be callables: they are read after the start, once the port is bound."""
    await fake.start()
    print(json.dumps({key: (value() if callable(value) else value) for key, value in info.items()}), flush=True)
    await until_signalled()
    await fake.close()
