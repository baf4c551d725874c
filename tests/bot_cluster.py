"""Several `python bot.py` processes on one PostgreSQL database, behind a round-robin balancer.

    async with Balancer() as lb:                     # http://127.0.0.1:PORT, forwards any request
        bots = [await BotProcess.start(tmp, f"p{i}", env) for i in range(3)]
        lb.backends = [b.url for b in bots]          # a refused connection tries the next one
        ...
        await bots[0].kill()                         # SIGKILL (or .signal(SIGSTOP) / SIGCONT)

The processes are the real entry point, configured by the environment only (`cluster_env`);
the fakes (model, Telegram, Slack) live in the test process and outlive them. `owners(url)`
reads which process holds which chat's lease, from the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import re
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import aiohttp
import asyncpg
from aiohttp import web

from tests.fakes import pace

REPO = Path(__file__).resolve().parent.parent
_URL = re.compile(r"(http://127\.0\.0\.1:\d+)")


def cluster_env(db_url: str, llm_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "SLACK_", "BOT_", "OPENAI_"))}
    env.update({
        "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1", "BOT_DB_URL": db_url, "BOT_PORT": "0",
        "OPENAI_BASE_URL": llm_url, "OPENAI_API_KEY": "sk-test", "BOT_VALIDATE": "off",
        "BOT_LOG_LEVEL": "WARNING", "BOT_LEASE_S": "2",
        # a test starts up to three processes and another worker may run one too: a pool of 20
        # each (the default) would take most of a server's 100 connections
        "BOT_DB_POOL_MAX": "6", **pace.passed_on(),
    })
    env.update(extra)
    return env


@dataclass
class BotProcess:
    name: str
    proc: asyncio.subprocess.Process
    url: str
    log: Path
    lines: list[str] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @classmethod
    async def start(cls, tmp: Path, name: str, env: dict[str, str], within: float = 30) -> BotProcess:
        log = tmp / f"{name}.log"
        proc = await asyncio.create_subprocess_exec(
            sys.executable, str(REPO / "bot.py"), cwd=tmp, env=env,
            stdout=asyncio.subprocess.PIPE, stderr=log.open("ab"),
        )
        assert proc.stdout is not None
        try:
            async with asyncio.timeout(within):
                while True:
                    line = (await proc.stdout.readline()).decode()
                    if not line:
                        raise AssertionError(f"{name} exited with {await proc.wait()}:\n{log.read_text()[-3000:]}")
                    if found := _URL.search(line):
                        break
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            raise
        bot = cls(name, proc, found.group(1), log)
        bot._drain = asyncio.ensure_future(bot._read())  # type: ignore[attr-defined]
        return bot

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            self.lines.append(line.decode())

    def logged(self, needle: str) -> bool:
        return needle in self.log.read_text(errors="replace")

    def signal(self, sig: int) -> None:
        if self.proc.returncode is None:
            self.proc.send_signal(sig)

    async def kill(self) -> None:
        self.signal(signal.SIGKILL)
        await self.proc.wait()

    async def stop(self) -> None:
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.send_signal(signal.SIGTERM)
            try:
                async with asyncio.timeout(10):
                    await self.proc.wait()
            except TimeoutError:
                await self.kill()

    async def healthy(self) -> bool:
        async with aiohttp.ClientSession() as http, http.get(self.url + "/healthz") as resp:
            return resp.status == 200


class Balancer:
    """Round-robin over `backends`; a backend that refuses the connection is skipped (as a load
    balancer's health check would), and a request no backend took is answered 502."""

    def __init__(self) -> None:
        self.backends: list[str] = []
        self.port = 0
        self.served: dict[str, int] = {}
        self.paths: list[str] = []  # of every request forwarded, in order
        self._turn = itertools.count()
        self._runner: web.AppRunner | None = None
        self._http: aiohttp.ClientSession | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> Balancer:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._forward)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=20))
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        if self._http is not None:
            await self._http.close()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _forward(self, request: web.Request) -> web.Response:
        assert self._http is not None
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")}
        self.paths.append(request.path)
        start = next(self._turn)
        for i in range(len(self.backends)):
            backend = self.backends[(start + i) % len(self.backends)]
            try:
                async with self._http.request(request.method, backend + request.path_qs, data=body,
                                              headers=headers) as resp:
                    payload = await resp.read()
                    self.served[backend] = self.served.get(backend, 0) + 1
                    return web.Response(status=resp.status, body=payload,
                                        content_type=resp.content_type if payload else None)
            except (aiohttp.ClientOSError, aiohttp.ServerDisconnectedError):
                continue  # that process is gone (or reset the connection): the next one takes it
        return web.Response(status=502)


async def owners(db_url: str) -> dict[str, int]:
    """chat key -> pid of the process holding its live lease."""
    conn = await asyncpg.connect(db_url)
    try:
        rows = await conn.fetch("SELECT chat_key, owner FROM chat_leases WHERE owner IS NOT NULL AND expires_at > now()")
    finally:
        await conn.close()
    return {r["chat_key"]: int(r["owner"].split(":")[1]) for r in rows}


async def fetch(db_url: str, sql: str, *args: object) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(db_url)
    try:
        return list(await conn.fetch(sql, *args))
    finally:
        await conn.close()


async def until(predicate_coro: object, within: float, what: str) -> None:
    """Poll an async predicate (a callable returning an awaitable bool) until true, or fail."""
    assert callable(predicate_coro)
    try:
        async with asyncio.timeout(within):
            while not await predicate_coro():
                await asyncio.sleep(0.05)  # other processes change the database: nothing to wait on
    except TimeoutError:
        raise AssertionError(f"not within {within} s: {what}") from None
