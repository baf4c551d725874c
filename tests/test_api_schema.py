"""The web API matches its own /openapi.json, and /docs works without internet.

Schemathesis (its command line, against a real `python bot.py` offline demo on 127.0.0.1) sends
requests generated from the served schema, valid ones and ones that violate it, and checks every
answer: no 5xx, only declared status codes and content types, bodies that match their schemas,
schema-violating requests refused and valid ones accepted. The event stream (`.../events`) is
left out: an endless text/event-stream has no body to check; tests/test_web_stream.py covers it.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import httpx
import pytest

from tests.bot_cluster import BotProcess

pytestmark = pytest.mark.slow

# more examples in CI (the thorough profile), fewer on a developer's machine
EXAMPLES = "30" if os.environ.get("CI") else "10"


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "SLACK_", "BOT_", "OPENAI_"))}
    env.update({"BOT_PORT": "0", "BOT_RATE_PER_IP": "0", "BOT_RATE_PER_USER": "0", "BOT_LOG_LEVEL": "WARNING",
                "BOT_DB_PATH": str(tmp / "bot.sqlite3"), "PYTHONUNBUFFERED": "1"})
    return env


async def test_the_served_api_matches_its_schema(tmp_path: Path) -> None:
    bot = await BotProcess.start(tmp_path, "api", _env(tmp_path))
    try:
        st = Path(sys.executable).with_name("st")
        run = await asyncio.create_subprocess_exec(
            str(st), "run", f"{bot.url}/openapi.json", "--checks", "all", "--mode", "all",
            "--max-examples", EXAMPLES, "--exclude-path-regex", "/events$", "--request-timeout", "15", "--no-color",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, cwd=tmp_path,  # its cache goes there
        )
        out, _ = await asyncio.wait_for(run.communicate(), 480)
        summary = out.decode(errors="replace")[-6000:]
        assert run.returncode == 0, summary
        assert "Tested: 8" in summary and " passed" in summary, summary
    finally:
        await bot.stop()


async def test_the_docs_page_needs_no_internet(tmp_path: Path) -> None:
    bot = await BotProcess.start(tmp_path, "docs", _env(tmp_path))
    try:
        async with httpx.AsyncClient(base_url=bot.url) as http:
            page = await http.get("/docs")
            assert page.status_code == 200
            assert "https://" not in page.text  # every asset from here, none from a CDN
            for asset in ("/docs/assets/swagger-ui-bundle.js", "/docs/assets/swagger-ui.css"):
                assert asset in page.text
                got = await http.get(asset)
                assert got.status_code == 200 and len(got.content) > 10_000
            assert (await http.get("/docs/assets/../../etc/passwd")).status_code == 404
            assert (await http.get("/docs/assets/index.html")).status_code == 404
    finally:
        await bot.stop()
