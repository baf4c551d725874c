"""What the processes of one test run share: a directory (BOT_TEST_RUN_DIR, made by
tests/conftest.py in the controlling process and removed at the end of the run; the xdist workers
inherit it) and locks in it, for what one worker makes and the others reuse."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

RUN_DIR_ENV = "BOT_TEST_RUN_DIR"


class NoRunDir(RuntimeError):
    pass


def run_dir() -> Path:
    value = os.environ.get(RUN_DIR_ENV)
    if not value:
        raise NoRunDir(f"{RUN_DIR_ENV} is not set (tests/conftest.py sets it for a pytest run)")
    return Path(value)


@contextlib.contextmanager
def locked(name: str) -> Iterator[Path]:
    """Hold the run-wide lock `name` (one holder across the run's processes); yields the run's directory."""
    directory = run_dir()
    with open(directory / f"{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield directory
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
