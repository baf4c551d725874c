"""Connections to PostgreSQL (asyncpg): the pool, the session settings, the errors.

Every connection the store opens, pooled or dedicated (the LISTEN connection), is made here, so
they share one set of session settings:

- `idle_in_transaction_session_timeout`: a process stopped inside a transaction (SIGSTOP, a
  frozen VM, a long GC pause) holds row locks, among them the FOR SHARE lock a fenced write
  takes on its chat's lease row. The server ends such a session after this long, so the
  stopped process blocks its successor's takeover for at most this, well inside a lease.
- `application_name`: `pg_stat_activity` shows which connections are the bot's.
- `tcp_keepalives_*`: the pool keeps its connections for the process's life (below), and a
  connection that carries nothing for minutes can be dropped without a word by a NAT, a
  firewall or a cloud load balancer (many drop a flow idle for 5-6 minutes). The server probes
  an idle connection every minute, which keeps such a path open, and closes one whose peer is
  gone. (libpq turns keepalives on by default; asyncpg leaves the socket as it is.)

Pool size. PostgreSQL's default `max_connections` is 100, 3 of them reserved for superusers.
One process uses at most POOL_MAX pooled connections plus one dedicated LISTEN connection (and,
later, one for the poller's advisory lock): 3 x (20 + 2) = 66, so three processes fit with
room for psql, migrations and monitoring. The 50-chat burst in benchmarks/bench_pg_drivers.py
is served by 20 connections at about 3,000 writes/s on 2 cores: more would not be faster.

The store opens its whole pool at start and keeps it (`create_pool`'s `min_size` is the
store's pool_max, and no idle connection is closed). A pool that grows when load arrives opens
each connection at the worst moment: a new connection costs a server process, its catalog
caches, a first compile of each server function and a Parse of each statement, some 15-20 ms
of CPU, and the step that asked for it waits for all of that while the cores are busy with
the burst. The store also has each new connection call the steps' functions once
(bot.store.postgres.writes.warm), so a process's first burst does not compile them either. In
benchmarks/bench_pg_scale.py (three processes, 50 chats each starting within a second) the
pools grew from 2 to 20 in the first two seconds, whose steps all took 300-800 ms over the
model; three alternating pairs of runs gave a step p99 minus the model of 45-275 ms with the
pools opened at start, against 293-676 ms.
"""

from __future__ import annotations

import socket
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from bot.store.base import StoreUnavailable

POOL_MAX = 20
CONNECT_TIMEOUT_S = 10.0
IDLE_IN_TRANSACTION_TIMEOUT_S = 5.0  # a third of the default lease (BOT_LEASE_S=15)
APPLICATION_NAME = "travel-bot"
# the one connection per process that listens for its chats (bot.cluster.leases): counting them
# counts the bot's live processes (a dead process's connection is gone with it)
LEASES_APPLICATION_NAME = "travel-bot-leases"
URL_SETTING = "BOT_DB_URL"

# A connection that was lost, or ended by the server, while in use.
LOST_ERRORS: tuple[type[BaseException], ...] = (
    OSError,  # reset, refused, unreachable
    asyncpg.PostgresConnectionError,  # includes ConnectionDoesNotExistError
    asyncpg.OperatorInterventionError,  # pg_terminate_backend, server shutdown or restart
    asyncpg.IdleInTransactionSessionTimeoutError,
    # a connection whose server process was ended while it sat idle in the pool: its next use
    # finds the protocol in a failed state (the pool replaces it once it is released)
    asyncpg.InternalClientError,
)
# What opening a connection raises when the database cannot be had.
CONNECT_ERRORS: tuple[type[BaseException], ...] = (
    *LOST_ERRORS,
    TimeoutError,
    asyncpg.InterfaceError,
    asyncpg.InvalidCatalogNameError,  # the URL's database does not exist
    asyncpg.InvalidAuthorizationSpecificationError,  # unknown role, refused by pg_hba.conf
)


def session_settings(idle_in_transaction_s: float = IDLE_IN_TRANSACTION_TIMEOUT_S,
                     application_name: str = APPLICATION_NAME) -> dict[str, str]:
    return {
        "idle_in_transaction_session_timeout": str(int(idle_in_transaction_s * 1000)),
        "application_name": application_name,
        # the default since PostgreSQL 9.1, made sure of: pg_leases.literal relies on it
        "standard_conforming_strings": "on",
        # seconds; ignored on a Unix socket (see the module's docstring)
        "tcp_keepalives_idle": "60", "tcp_keepalives_interval": "10", "tcp_keepalives_count": "3",
    }


def text_array(values: Sequence[int | float | None]) -> list[str | None]:
    """Numbers for an array parameter sent as text[] and cast in the statement
    (`$1::text[]::bigint[]`). asyncpg knows text[] and oid[]; any other array type (bigint[],
    double precision[]) it looks up with a catalog query the first time a connection meets it,
    which cost the server 40-60 ms on each connection a pool opened under load
    (benchmarks/bench_pg_scale.py). repr of a float reads back as the same double."""
    return [None if v is None else repr(v) for v in values]


def redact(url: str) -> str:
    """The URL without its password, for messages and logs."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable URL>"
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = (parts.username or "") + ":***"
    return urlunsplit(parts._replace(netloc=f"{user}@{netloc[-1]}"))


def unavailable(url: str, exc: BaseException, doing: str = "connect to PostgreSQL") -> StoreUnavailable:
    """The error for an unreachable database, naming the setting to fix."""
    reason = str(exc).strip() or type(exc).__name__
    if isinstance(exc, socket.gaierror):
        reason = f"unknown host ({reason})"
    hint = "Start PostgreSQL or fix BOT_DB_URL"
    if isinstance(exc, asyncpg.InvalidCatalogNameError):
        hint = "Create that database (the bot creates its tables, not the database) or fix BOT_DB_URL"
    elif isinstance(exc, asyncpg.InsufficientPrivilegeError):
        hint = "Grant that role CREATE on the database's schema (the bot creates its tables) or fix BOT_DB_URL"
    return StoreUnavailable(f"cannot {doing} at {URL_SETTING}={redact(url)}: {reason}. {hint}.")


def gone(conn: asyncpg.Connection) -> bool:
    """The pooled connection is closed (a proxy the pool already took back counts as closed)."""
    try:
        return bool(conn.is_closed())
    except asyncpg.InterfaceError:
        return True


async def connect(url: str, *, idle_in_transaction_s: float = IDLE_IN_TRANSACTION_TIMEOUT_S,
                  application_name: str = APPLICATION_NAME) -> asyncpg.Connection:
    """One dedicated connection (the LISTEN connection, migrations); StoreUnavailable if down."""
    try:
        return await asyncpg.connect(
            url, timeout=CONNECT_TIMEOUT_S,
            server_settings=session_settings(idle_in_transaction_s, application_name),
        )
    except CONNECT_ERRORS as exc:
        raise unavailable(url, exc) from exc


async def _keep(conn: asyncpg.Connection) -> None:
    """The pool's reset, run as a connection goes back to the pool: nothing to do.

    asyncpg's default sends `SELECT pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL`
    on every release, one more round trip after every read and every write (a quarter of the
    store's statements in bench_pg_overhead.py). The pooled connections take no session state:
    LISTEN, advisory locks and the migration lock live on dedicated connections (pg_notify,
    pg_session_lock, pg_migrate), the store runs no SET or cursor. asyncpg itself still rolls
    back a transaction left open before it calls this."""


async def create_pool(
    url: str, *, min_size: int | None = None, max_size: int = POOL_MAX,
    idle_in_transaction_s: float = IDLE_IN_TRANSACTION_TIMEOUT_S,
    init: Callable[[asyncpg.Connection], Awaitable[None]] | None = None,
) -> asyncpg.Pool:
    """The store's pool; its first `min_size` connections (all `max_size` by default) are opened
    now and kept open while idle (StoreUnavailable if down). `init` runs on each new connection
    before the pool hands it out."""
    kwargs: dict[str, Any] = {
        "min_size": max_size if min_size is None else min(min_size, max_size), "max_size": max_size,
        "timeout": CONNECT_TIMEOUT_S, "server_settings": session_settings(idle_in_transaction_s), "reset": _keep,
        "init": init,
        # asyncpg closes a connection idle for 300 s, min_size or not: the next burst after a
        # quiet spell would open them again while it waits (see the module's docstring)
        "max_inactive_connection_lifetime": 0,
    }
    try:
        pool = await asyncpg.create_pool(url, **kwargs)
    except CONNECT_ERRORS as exc:
        raise unavailable(url, exc) from exc
    assert pool is not None
    return pool
