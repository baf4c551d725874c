"""Shared test setup: the network is blocked except for loopback, so no test can reach the internet."""

from __future__ import annotations

import contextlib
import ipaddress
import socket
from collections.abc import AsyncIterator

import pytest

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _is_loopback(address: object) -> bool:
    if not isinstance(address, tuple) or not address:
        return True  # unix sockets and the like
    host = str(address[0])
    if host in {"localhost", ""}:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded_connect(self: socket.socket, address: object) -> None:
    if not _is_loopback(address):
        raise ConnectionRefusedError(f"tests may not reach the network: {address!r}")
    _real_connect(self, address)  # type: ignore[arg-type]


def _guarded_connect_ex(self: socket.socket, address: object) -> int:
    if not _is_loopback(address):
        raise ConnectionRefusedError(f"tests may not reach the network: {address!r}")
    return _real_connect_ex(self, address)  # type: ignore[arg-type]


@pytest.fixture(autouse=True, scope="session")
def _block_network() -> object:
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
    yield
    socket.socket.connect = _real_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _real_connect_ex  # type: ignore[method-assign]


@pytest.fixture
async def pg_url() -> AsyncIterator[str]:
    """The URL of a fresh, empty PostgreSQL database for this test (tests/pg_support.py)."""
    from tests.pg_support import fresh_database

    async with fresh_database() as url:
        yield url


@pytest.fixture
async def closing() -> AsyncIterator[contextlib.AsyncExitStack]:
    """What a test opens and registers here (`push_async_callback(x.aclose)`) is closed after it."""
    async with contextlib.AsyncExitStack() as stack:
        yield stack
