"""Every startup failure ends the process within 5 s (beyond its imports) with one clear line; `bot.py check` reaches
each configured service once. The bot runs as a child process, as a process manager runs it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_api import FakeTelegram

pytestmark = pytest.mark.slow  # long: handed out first under xdist (tests/conftest.py)

REPO = Path(__file__).resolve().parent.parent
LIMIT_S = 5.0


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "BOT_", "TELEGRAM_", "SLACK_"))}
    return {**clean, "PYTHONPATH": str(REPO), "BOT_DB_PATH": str(tmp / "bot.sqlite3"), "BOT_PORT": "0", **extra}


# What bot.py imports before it can fail: on a loaded machine this alone can take seconds, and it
# is not what these tests are about (a failing start must not wait on a library's long timeouts).
_IMPORTS = "import tripbot.cli, adapters.runtime, adapters.telegram.adapter, adapters.slack.adapter, adapters.web"


async def _import_time(tmp: Path) -> float:
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", _IMPORTS, cwd=tmp, env=_env(tmp))
    await asyncio.wait_for(proc.wait(), 60)
    return time.monotonic() - started


async def _run(tmp: Path, *args: str, **env: str) -> tuple[int, str, str, float]:
    """Exit code, stdout, stderr and the seconds the process took beyond its imports."""
    imports = await _import_time(tmp)
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(REPO / "bot.py"), *args, cwd=tmp, env=_env(tmp, **env),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, stdin=asyncio.subprocess.DEVNULL,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 30)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise AssertionError(f"bot.py {' '.join(args)} did not exit within 30 s") from None
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode(), max(0.0, time.monotonic() - started - imports)


def _one_line(err: str, prefix: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line on stderr, got:\n{err}"
    assert lines[0].startswith(prefix), lines[0]
    assert "Traceback" not in err
    return lines[0]


@contextlib.asynccontextmanager
async def _silent_server() -> AsyncIterator[int]:
    """A port that accepts connections and never answers: a black-holed service."""
    held: list[asyncio.StreamWriter] = []

    async def hold(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        for writer in held:
            writer.close()
        server.close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_a_taken_port_is_one_line_and_a_quick_exit(tmp_path: Path) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        code, _, err, took = await _run(tmp_path, BOT_PORT=str(port))
    line = _one_line(err, "startup error:")
    assert code == 1 and took < LIMIT_S, (code, took)
    assert f"127.0.0.1:{port}" in line and "BOT_PORT" in line


async def test_telegram_refusing_connections_is_one_line_and_a_quick_exit(tmp_path: Path) -> None:
    code, _, err, took = await _run(tmp_path, TELEGRAM_BOT_TOKEN="123:secret-token",
                                    TELEGRAM_API_BASE_URL=f"http://127.0.0.1:{_closed_port()}/bot")
    line = _one_line(err, "startup error: telegram")
    assert code == 1 and took < LIMIT_S, (code, took)
    assert "TELEGRAM_API_BASE_URL" in line and "secret-token" not in err


async def test_telegram_that_never_answers_is_one_line_within_five_seconds(tmp_path: Path) -> None:
    async with _silent_server() as port:
        code, _, err, took = await _run(tmp_path, TELEGRAM_BOT_TOKEN="123:abc",
                                        TELEGRAM_API_BASE_URL=f"http://127.0.0.1:{port}/bot")
    line = _one_line(err, "startup error: telegram did not answer")
    assert code == 1 and took < LIMIT_S, (code, took)
    assert "TELEGRAM_API_BASE_URL" in line


async def test_telegram_refusing_the_token_does_not_print_it(tmp_path: Path) -> None:
    async with FakeTelegram() as tg:
        code, _, err, took = await _run(tmp_path, TELEGRAM_BOT_TOKEN="999:not-the-token",
                                        TELEGRAM_API_BASE_URL=tg.base_url)
    line = _one_line(err, "startup error: telegram")
    assert code == 1 and took < LIMIT_S
    assert "not-the-token" not in err and "TELEGRAM_BOT_TOKEN" in line


@pytest.mark.parametrize(
    ("env", "setting"),
    [
        ({"SLACK_BOT_TOKEN": "xoxb-1"}, "SLACK_SIGNING_SECRET"),
        ({"TELEGRAM_BOT_TOKEN": "1:a", "TELEGRAM_WEBHOOK_URL": "https://x.example/tg"}, "TELEGRAM_WEBHOOK_SECRET"),
        ({"BOT_HOST": "0.0.0.0"}, "BOT_WEB_TOKEN"),
        ({"BOT_WEB_TOKEN": "short"}, "BOT_WEB_TOKEN"),
        ({"OPENAI_API_KEY": "sk-1", "OPENAI_BASE_URL": "not-a-url"}, "OPENAI_BASE_URL"),
        ({"TELEGRAM_BOT_TOKEN": "1:a", "TELEGRAM_API_BASE_URL": "api.telegram.org/bot"}, "TELEGRAM_API_BASE_URL"),
    ],
)
async def test_settings_that_do_not_fit_together_are_configuration_errors(tmp_path: Path, env: dict[str, str], setting: str) -> None:
    code, _, err, took = await _run(tmp_path, **env)
    line = _one_line(err, f"configuration error: {setting}")
    assert code == 2 and took < LIMIT_S
    assert ".env" in line and "short" not in line  # a secret's value is never echoed


async def test_check_reaches_each_configured_service(tmp_path: Path) -> None:
    async with FakeTelegram() as tg, FakeOpenAI([]) as llm:
        code, out, err, _ = await _run(
            tmp_path, "check", TELEGRAM_BOT_TOKEN=tg.token, TELEGRAM_API_BASE_URL=tg.base_url,
            OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=llm.base_url,
        )
        assert tg.calls("getMe")
    assert code == 0, out + err
    for name in ("configuration", "database", "http", "model", "telegram"):
        assert f"{name}: ok" in out, out
    assert "all checks passed" in out


async def test_check_names_what_failed(tmp_path: Path) -> None:
    code, out, _, took = await _run(
        tmp_path, "check", TELEGRAM_BOT_TOKEN="1:a", TELEGRAM_API_BASE_URL=f"http://127.0.0.1:{_closed_port()}/bot",
    )
    assert code == 1 and took < 10
    assert "telegram: FAILED" in out and "TELEGRAM_API_BASE_URL" in out
    assert "model: ok: offline planner" in out


@contextlib.asynccontextmanager
async def _not_telegram(status: int, body: bytes, content_type: str) -> AsyncIterator[int]:
    """A web server that answers every request, but not as the Bot API would."""
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while (await reader.readline()) not in (b"\r\n", b""):
                pass
            writer.write(f"HTTP/1.1 {status} Whatever\r\nContent-Type: {content_type}\r\n"
                         f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()


PAGE = b"<!DOCTYPE html><html><body><h1>Welcome to nginx!</h1>" + b"<p>filler</p>" * 200 + b"</body></html>"


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [(200, PAGE, "HTTP 2xx with a body that is not JSON"), (501, PAGE, "HTTP 501 with an HTML page"), (404, b"", "HTTP 404 with an empty body"),
     (502, b"upstream down", "HTTP 502 with a body that is not JSON")],
)
@pytest.mark.parametrize("command", ["serve", "check"])
async def test_a_base_url_that_answers_but_is_not_telegram_is_one_line(
        tmp_path: Path, status: int, body: bytes, kind: str, command: str) -> None:
    async with _not_telegram(status, body, "text/html") as port:
        base = f"http://127.0.0.1:{port}/bot"
        code, out, err, _ = await _run(tmp_path, command, TELEGRAM_BOT_TOKEN="123:secret-token",
                                       TELEGRAM_API_BASE_URL=base)
    assert code == 1
    said = f"TELEGRAM_API_BASE_URL ({base}) answers, but not as the Telegram Bot API: {kind}"
    if command == "serve":
        line = _one_line(err, "startup error: telegram")
    else:
        line = next(x for x in out.splitlines() if x.startswith("telegram: FAILED"))
        assert "Traceback" not in out + err and "<html" not in out + err
    assert said in line and "refused" not in line and "secret-token" not in out + err
