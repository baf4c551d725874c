"""The package as a deployment gets it: build the wheel, install it (with constraints.txt) into a
fresh virtual environment outside the checkout, and start the installed `tripbot` against the
fakes. Nothing of the checkout is importable there, so the migrations, the web page and the
sandbox data must all come from the wheel's package data."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.fakes import pace
from tests.fakes.openai_server import FakeOpenAI, reply
from tests.fakes.telegram_api import FakeTelegram
from tests.run_support import locked
from tests.telegram_support import has

ROOT = Path(__file__).resolve().parent.parent
CHAT = 4242

pytestmark = pytest.mark.slow


def _sh(*args: str | Path, cwd: Path | None = None, timeout: float = 600, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False,
                          env=env)
    assert done.returncode == 0, f"{' '.join(map(str, args))} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def installed() -> Path:
    """bin/ of a fresh venv with the wheel installed, built once per run: the first test process
    that needs it builds it under a run-wide lock, the others (xdist workers) reuse it."""
    with locked("wheel") as run:
        work = run / "wheel"
        if not (work / "complete").exists():
            shutil.rmtree(work, ignore_errors=True)  # what a build that failed halfway left
            work.mkdir()
            _build_and_install(work)
            (work / "complete").touch()
    return work / "venv" / "bin"


def _build_and_install(work: Path) -> None:
    """The venv gets no pip of its own: this one installs into it (`pip --python`), without
    compiling every dependency to bytecode first (what is imported compiles when it is)."""
    left_build = not (ROOT / "build").exists()
    try:
        _sh(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", work / "dist", ROOT, cwd=work)
    finally:
        if left_build:  # setuptools builds in the checkout: leave it as it was
            shutil.rmtree(ROOT / "build", ignore_errors=True)
    wheels = list((work / "dist").glob("travel_agent_bot-*.whl"))
    assert len(wheels) == 1, wheels
    _sh(sys.executable, "-m", "venv", "--without-pip", work / "venv")
    bin_dir = work / "venv" / "bin"
    _sh(*_pip(bin_dir), "install", "-q", "--no-compile", "-c", ROOT / "constraints.txt", wheels[0], cwd=work)


def _pip(bin_dir: Path) -> list[str | Path]:
    return [sys.executable, "-m", "pip", "--disable-pip-version-check", "--python", bin_dir / "python"]


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items()
            if not k.startswith(("OPENAI_", "BOT_", "TELEGRAM_", "SLACK_", "PYTHON", "VIRTUAL_ENV"))}
    return {**keep, "BOT_DB_PATH": str(tmp / "data" / "bot.sqlite3"), "BOT_PORT": "0", "BOT_VALIDATE": "off",
            **pace.passed_on(), **extra}


def test_the_wheel_holds_the_package_data_and_the_command(installed: Path, tmp_path: Path) -> None:
    where = _sh(installed / "python", "-c", "import tripbot, migrations, adapters.web; print(tripbot.__file__)", cwd=tmp_path)
    assert str(installed.parent) in where and str(ROOT) not in where  # the installed copy, not the checkout
    help_text = _sh(installed / "tripbot", "--help", cwd=tmp_path)
    for command in ("serve", "chat", "check"):
        assert command in help_text
    listed = _sh(*_pip(installed), "list", "--format=freeze", cwd=tmp_path)
    assert "airportsdata" not in listed and "aiolimiter" not in listed  # build-time and unused extras stay out
    # the token encodings are package data: exact counts for the default model with an empty
    # tiktoken cache (a download would fail: tests never reach the internet)
    counted = _sh(installed / "python", "-c", "from agent_core.tokens import TokenCounter; "
                  "c = TokenCounter('gpt-4o-mini'); print(c.exact, c.encoding_name, c.count_text('你好，世界 🌍🚀'))",
                  cwd=tmp_path, env={**os.environ, "TIKTOKEN_CACHE_DIR": str(tmp_path / "empty-cache")})
    assert counted.split() == ["True", "o200k_base", "7"]


@pytest.mark.parametrize(("setting", "value", "extra"), [
    ("BOT_DB_URL", "postgresql://bot@127.0.0.1:5432/bot", "postgres"),
    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318", "otel"),
    ("BOT_TRACE", "console", "otel"),
])
def test_a_setting_whose_extra_is_not_installed_is_one_clear_line(
    installed: Path, tmp_path: Path, setting: str, value: str, extra: str,
) -> None:
    listed = _sh(*_pip(installed), "list", "--format=freeze", cwd=tmp_path).lower()
    assert "asyncpg" not in listed and "opentelemetry-sdk" not in listed  # the core installs without them
    done = subprocess.run([str(installed / "tripbot"), "check"], cwd=tmp_path, env=_env(tmp_path, **{setting: value}),
                          capture_output=True, text=True, timeout=120, check=False)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith(f"configuration error: {setting}") and f"travel-agent-bot[{extra}]" in lines[0]


async def test_the_installed_bot_serves_against_the_fakes(installed: Path, tmp_path: Path) -> None:
    async with FakeOpenAI([reply("<answer>Hello from the installed wheel.</answer>")]) as llm, FakeTelegram() as tg:
        env = _env(tmp_path, TELEGRAM_BOT_TOKEN=tg.token, TELEGRAM_API_BASE_URL=tg.base_url,
                   OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=llm.base_url)
        check = await asyncio.create_subprocess_exec(str(installed / "tripbot"), "check", cwd=tmp_path, env=env,
                                                     stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        out, _ = await asyncio.wait_for(check.communicate(), 60)
        assert check.returncode == 0, out.decode()
        proc = await asyncio.create_subprocess_exec(str(installed / "tripbot"), "serve", cwd=tmp_path, env=env,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        try:
            assert proc.stdout is not None
            seen = ""
            while "Travel bot ready" not in seen:
                line = await asyncio.wait_for(proc.stdout.readline(), 30)
                assert line, f"tripbot serve exited:\n{seen}"
                seen += line.decode()
            match = re.search(r"open (http://\S+) in a browser", seen)
            assert match, seen
            async with httpx.AsyncClient(base_url=match.group(1), timeout=10) as web:
                assert (await web.get("/healthz")).json()["ok"] is True
                page = await web.get("/")
                assert page.status_code == 200 and "/app.js" in page.text
                assert (await web.get("/app.js")).status_code == 200
                assert (await web.get("/favicon.svg")).status_code == 200
            tg.send_text(CHAT, "hello")
            await tg.wait_for(has("Hello from the installed wheel.", CHAT), within=30)
            versions = sqlite3.connect(tmp_path / "data" / "bot.sqlite3").execute("SELECT version FROM schema_version").fetchall()
            shipped = sorted(int(p.name[:4]) for p in (ROOT / "migrations").glob("*.sql"))
            assert sorted(v for (v,) in versions) == shipped  # every migration came with the wheel
        finally:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
                await asyncio.wait_for(proc.wait(), 20)
        assert proc.returncode == 0
