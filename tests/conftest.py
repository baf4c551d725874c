"""Shared test setup: the network is blocked except for loopback, so no test can reach the internet.

How a run is set up (docs/testing.md): the platforms' clock (BOT_PLATFORM_TIME_SCALE,
tests/fakes/pace.py) runs twenty times fast for every bot and fake unless the environment sets it
(tests marked `real_pace` run at 1.0); the Hypothesis profile is `dev`, or `ci` under CI; the run
gets a directory of its own (BOT_TEST_RUN_DIR) where a throwaway PostgreSQL server lives when the
machine has none (tests/pg_support.py) and what one worker builds for all (the wheel) is kept
(tests/run_support.py). Under pytest-xdist the slow modules are handed out first.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import shutil
import socket
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.fakes import pace
from tests.run_support import RUN_DIR_ENV

TEST_TIME_SCALE = "0.05"
_RUN_DIR = pytest.StashKey[Path]()

# Hypothesis: a quick look while developing, a thorough one in CI (.ci/run; HYPOTHESIS_PROFILE picks)
settings.register_profile("dev", max_examples=20, deadline=None)
settings.register_profile("ci", max_examples=100, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
HYPOTHESIS_PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
settings.load_profile(HYPOTHESIS_PROFILE)


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault(pace.ENV, TEST_TIME_SCALE)  # read by the bots and fakes this run starts
    if not hasattr(config, "workerinput"):  # the controlling process (or the only one)
        run_dir = Path(tempfile.mkdtemp(prefix="bot-tests-"))
        os.environ[RUN_DIR_ENV] = str(run_dir)  # the xdist workers it starts inherit it
        config.stash[_RUN_DIR] = run_dir


def pytest_unconfigure(config: pytest.Config) -> None:
    run_dir = config.stash.get(_RUN_DIR, None)
    if run_dir is not None:
        from tests.throwaway_pg_support import stop

        stop(run_dir)
        shutil.rmtree(run_dir, ignore_errors=True)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    from tests.pg_support import describe_server

    run_dir = config.stash.get(_RUN_DIR, None)
    if run_dir is None:
        return
    terminalreporter.write_line(f"platform time scale {os.environ[pace.ENV]} (tests marked real_pace: 1.0); "
                                f"hypothesis profile {HYPOTHESIS_PROFILE}; {describe_server(run_dir)}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The slow modules first, each kept together (its module-scoped fixtures are made once per
    worker), so no worker is left with a long test at the end while the other idles; under
    `--dist load --maxschedchunk 2` (make test) workers take two tests at a time from the front.
    The wheel's module leads: its first two tests go to one worker, which builds the wheel once."""
    def module(item: pytest.Item) -> str:
        return item.nodeid.split("::", 1)[0]

    slow = {module(it) for it in items if it.get_closest_marker("slow") or it.get_closest_marker("browser")}
    items.sort(key=lambda it: (module(it) != "tests/test_wheel_install.py", module(it) not in slow))


@pytest.fixture(autouse=True)
def _platform_pace(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests marked `real_pace` see the platforms at their real speed (the bot and the fakes alike)."""
    if request.node.get_closest_marker("real_pace"):
        monkeypatch.setenv(pace.ENV, "1.0")

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
async def pg_url(request: pytest.FixtureRequest) -> AsyncIterator[str]:
    """The URL of a fresh PostgreSQL database for this test, migrated (a clone of the run's
    template), or empty for a test marked `empty_database` (tests/pg_support.py)."""
    from tests.pg_support import fresh_database

    async with fresh_database(migrated=request.node.get_closest_marker("empty_database") is None) as url:
        yield url


@pytest.fixture
async def closing() -> AsyncIterator[contextlib.AsyncExitStack]:
    """What a test opens and registers here (`push_async_callback(x.aclose)`) is closed after it."""
    async with contextlib.AsyncExitStack() as stack:
        yield stack
