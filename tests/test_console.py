"""The terminal chat as a person uses it: `bot.py chat` on a real pseudo-terminal. Ctrl-C ends it
at once (also while it waits for a line, or while it plans), Ctrl-D leaves the shell's prompt on
a line of its own, the planner's introduction is shown whole, and a number answers a question
asked before a restart."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


class Terminal:
    def __init__(self, tmp: Path, **settings: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "BOT_", "TELEGRAM_", "SLACK_"))}
        env.update(BOT_DB_PATH=str(tmp / "bot.sqlite3"), COLUMNS="100", LINES="40", PYTHONPATH=str(ROOT), **settings)
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "bot.py"), "chat"], cwd=tmp, env=env, stdin=slave, stdout=slave, stderr=slave,
            start_new_session=True, preexec_fn=lambda: _controlling_tty(slave),
        )
        os.close(slave)
        self.screen = ""

    def read_until(self, needle: str, within: float = 30.0) -> str:
        deadline = time.monotonic() + within
        while needle not in self.screen:
            left = deadline - time.monotonic()
            if left <= 0 or (self.proc.poll() is not None and not self._ready(0.1)):
                raise AssertionError(f"never saw {needle!r}; the screen:\n{self.screen}")
            if self._ready(min(left, 0.5)):
                try:
                    self.screen += os.read(self.master, 65536).decode(errors="replace")
                except OSError:  # the child closed the terminal
                    raise AssertionError(f"never saw {needle!r}; the screen:\n{self.screen}") from None
        return self.screen

    def _ready(self, timeout: float) -> bool:
        return bool(select.select([self.master], [], [], timeout)[0])

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def wait(self, within: float) -> int:
        try:
            code = self.proc.wait(within)
        finally:
            while self._ready(0.1):
                try:
                    self.screen += os.read(self.master, 65536).decode(errors="replace")
                except OSError:
                    break
        return code

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        os.close(self.master)


def _controlling_tty(fd: int) -> None:
    import fcntl
    import termios

    fcntl.ioctl(fd, termios.TIOCSCTTY, 0)


@pytest.fixture
def term(tmp_path: Path):  # type: ignore[no-untyped-def]
    t = Terminal(tmp_path)
    yield t
    t.close()


def test_ctrl_c_at_the_prompt_ends_at_once_without_a_traceback(term: Terminal) -> None:
    term.read_until("Ctrl-C exits.")
    term.read_until("> ")
    started = time.monotonic()
    term.type("\x03")  # the terminal turns it into SIGINT, as a person's Ctrl-C
    assert term.wait(5) == 0
    assert time.monotonic() - started < 5
    assert "Traceback" not in term.screen and "KeyboardInterrupt" not in term.screen


def test_ctrl_c_while_it_plans_ends_too(term: Terminal) -> None:
    term.read_until("> ")
    term.type("Plan a 3-day trip from Beijing to Shanghai\r")
    term.read_until("step 1/")
    term.type("\x03")
    assert term.wait(5) == 0
    assert "Traceback" not in term.screen


def test_ctrl_d_leaves_the_prompt_on_its_own_line(term: Terminal) -> None:
    term.read_until("> ")
    term.type("\x04")
    assert term.wait(5) == 0
    assert term.screen.rstrip(" ").endswith("> \r\n"), repr(term.screen[-40:])


def test_the_introduction_is_whole_and_a_three_day_trip_is_three_days(term: Terminal) -> None:
    term.read_until("> ")
    term.type("Plan a 3-day trip from Beijing to Shanghai\r")
    screen = term.read_until("Which day")
    intro = " ".join(line.strip(" ·\r") for line in screen.split("[offline planner]", 1)[1].split("?", 1)[0].splitlines())
    assert intro.rstrip().endswith("I will ask when I need to."), intro
    term.type("2\r")
    screen = term.read_until("Total ¥")  # the rows add up: an exact total, not "about"
    assert "3 days / 2 nights" in screen and "Stay:" in screen and "Sights:" in screen
    term.type("asdf\r")
    assert "did not understand" in term.read_until("did not understand")
    assert "You're welcome" not in term.screen
    term.type("\x04")
    assert term.wait(5) == 0


def test_a_team_plan_with_approvers_is_final_in_the_terminal(tmp_path: Path) -> None:
    """Nobody can press Approve in a terminal: the plan comes with its files and says where sign-off is."""
    term = Terminal(tmp_path, BOT_APPROVERS="U0APPROVER1")
    try:
        term.read_until("> ")
        term.type("Team offsite in Hangzhou on 2026-12-12 to 2026-12-14 for @ana (Beijing) and @bo (Shanghai)\r")
        screen = term.read_until("does not wait for one.", within=60)
        assert "team-trip-2026-12-12.ics" in screen and "team-trip-2026-12-12-costs.csv" in screen
        assert "Sign-off happens only in Telegram and Slack" in screen
        assert "please Approve or Reject" not in screen
        term.type("\x04")
        assert term.wait(5) == 0
    finally:
        term.close()
