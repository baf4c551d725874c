"""bot.py's command line: help, and a clear message for a bad setting."""

from __future__ import annotations

import os
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
