"""Take the README's screenshot of the web chat: `make run`'s offline demo in headless Chromium.

    .venv/bin/python scripts/screenshot_web_chat.py [--out docs/images/web-chat.png]

Starts `bot.py` as `make run` does (no configuration: offline planner, sandbox data) on a free
port with a throwaway SQLite file, opens the page in Debian's chromium through Playwright
(scripts/ensure_chromium.py installs it), asks for a trip, answers the planner's question, waits
for the plan card and saves a PNG. Nothing here is a test: the browser tests are in tests/.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import socket
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REQUEST = "Beijing to Shanghai for one night, two of us"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
                 "--disable-background-networking", "--disable-component-update"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _clean_env(db: Path, port: int) -> dict[str, str]:
    """What a fresh checkout has: no model, no chat platform, no live data."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "BOT_", "TELEGRAM_", "SLACK_", "AMAP_", "SEARXNG_", "TAVILY_", "DUFFEL_"))}
    env.update(BOT_DB_PATH=str(db), BOT_PORT=str(port), PYTHONUNBUFFERED="1")
    return env


async def _wait_healthy(url: str, timeout_s: float) -> None:
    import httpx

    async with httpx.AsyncClient() as client:
        deadline = asyncio.get_running_loop().time() + timeout_s
        while True:
            try:
                if (await client.get(url + "/healthz")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if asyncio.get_running_loop().time() > deadline:
                raise SystemExit(f"the bot did not answer {url}/healthz within {timeout_s:g} s")
            await asyncio.sleep(0.2)


async def shoot(out: Path, width: int, height: int) -> None:
    from playwright.async_api import async_playwright, expect

    chromium = shutil.which("chromium")
    if chromium is None:
        raise SystemExit("Debian's chromium is missing: run scripts/ensure_chromium.py first")
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="shot-") as tmp:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, str(ROOT / "bot.py"), cwd=tmp, env=_clean_env(Path(tmp) / "bot.sqlite3", port),
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            await _wait_healthy(url, 30)
            async with async_playwright() as pw:
                context = await pw.chromium.launch_persistent_context(
                    str(Path(tmp) / "profile"), executable_path=chromium, headless=True, args=CHROMIUM_ARGS,
                    locale="en-US", viewport={"width": width, "height": height}, device_scale_factor=1,
                )
                page = context.pages[0] if context.pages else await context.new_page()
                await page.goto(url)
                await page.fill("#input", REQUEST)
                await page.press("#input", "Enter")
                card = page.locator(".plan-card")
                # The offline planner may ask first (which station, which day): take its first option.
                for _ in range(4):
                    question = page.locator(".question:not(.answered) button.option")
                    done = card.first.wait_for(state="visible", timeout=20000)
                    asked = question.first.wait_for(state="visible", timeout=20000)
                    _, pending = await asyncio.wait(
                        [asyncio.ensure_future(done), asyncio.ensure_future(asked)],
                        return_when=asyncio.FIRST_COMPLETED,
                    )
                    for task in pending:
                        task.cancel()
                    if await card.count():
                        break
                    await question.first.click()
                await expect(card.first).to_be_visible(timeout=30000)
                await expect(page.locator("#input")).to_be_enabled(timeout=30000)
                await page.wait_for_timeout(300)  # the card's fade-in
                # from the request on: the steps, the question and its answer, the plan card's head
                await page.locator(".msg.user").first.scroll_into_view_if_needed()
                await page.evaluate("document.querySelector('.msg.user').scrollIntoView({block: 'start'})")
                out.parent.mkdir(parents=True, exist_ok=True)
                await page.screenshot(path=str(out), full_page=False)
                await context.close()
        finally:
            proc.terminate()
            await proc.wait()
    print(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images" / "web-chat.png")
    parser.add_argument("--width", type=int, default=1100)
    parser.add_argument("--height", type=int, default=1300)
    args = parser.parse_args()
    if not re.fullmatch(r".+\.png", str(args.out)):
        parser.error("--out must name a .png file")
    asyncio.run(shoot(args.out, args.width, args.height))
    return 0


if __name__ == "__main__":
    sys.exit(main())
