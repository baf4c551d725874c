"""bot.py's command line: help, and a clear message for a bad setting or an unreachable database."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "BOT_", "TELEGRAM_", "SLACK_"))}
    return subprocess.run(
        [sys.executable, "bot.py", *args], cwd=ROOT, env={**clean, **env}, capture_output=True, text=True, timeout=60,
        check=False,
    )


def test_help_lists_the_commands():
    done = run("--help")
    assert done.returncode == 0
    assert "serve" in done.stdout and "chat" in done.stdout


def test_a_bad_setting_is_named_with_how_to_fix_it():
    done = run(BOT_PORT="eighty")
    assert done.returncode == 2
    assert "BOT_PORT='eighty'" in done.stderr and ".env" in done.stderr


def test_postgres_down_at_start_is_one_clear_error_naming_bot_db_url(tmp_path):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = run(BOT_DB_URL=f"postgresql://bot@127.0.0.1:{port}/bot", BOT_DB_PATH=str(tmp_path / "unused.sqlite3"),
               BOT_PORT="0")
    assert done.returncode == 3, done.stderr
    assert f"BOT_DB_URL=postgresql://bot@127.0.0.1:{port}/bot" in done.stderr
    assert "Start PostgreSQL" in done.stderr and "did not start" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "unused.sqlite3").exists()  # BOT_DB_URL wins: SQLite was never opened
