"""The web chat in a real headless Chromium (Debian's build driven by Playwright's Python API).

Type a request, see a step, see the question, answer it, see the plan card; reload and find the
conversation again; on a phone-width screen nothing scrolls sideways. Screenshots go to
test-artifacts/.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.scripted_trip import DAYS, QUESTION_EN
from tests.web_runtime import WebStack, web_model, web_stack

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def _chromium() -> str:
    found = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
    if found is None:
        # The Makefile runs this before the tests; a direct `pytest` gets the same chance here.
        subprocess.run([sys.executable, str(ROOT / "scripts" / "ensure_chromium.py")], check=False, timeout=600)
        found = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
    if found is None:
        pytest.skip("Debian's chromium is not installed and could not be installed (needs root and apt-get)")
    return found


@pytest.fixture
async def stack(tmp_path) -> AsyncIterator[WebStack]:
    async with web_stack(tmp_path / "bot.sqlite3") as s:
        yield s


async def _launch(playwright, profile: Path, locale: str, viewport: dict[str, int]):
    return await playwright.chromium.launch_persistent_context(
        str(profile),
        executable_path=_chromium(),
        headless=True,
        args=CHROMIUM_ARGS,
        locale=locale,
        viewport=viewport,
        timeout=30000,
    )


async def test_plan_a_trip_with_a_question_in_chromium(tmp_path: Path):
    chromium = _chromium()
    from playwright.async_api import async_playwright, expect

    ARTIFACTS.mkdir(exist_ok=True)
    # The model holds its first reply until the page has shown the step it is working on.
    model = web_model(gate=asyncio.Event())
    async with web_stack(tmp_path / "bot.sqlite3", model=model) as stack, async_playwright() as pw:
        context = await _launch(pw, tmp_path / "profile-en", "en-US", {"width": 390, "height": 844})
        try:
            page = context.pages[0] if context.pages else await context.new_page()
            page.set_default_timeout(10000)
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            await page.goto(stack.base_url + "/")
            await expect(page.locator("#title")).to_have_text("Trip planner")

            await page.fill("#input", "Beijing to Shanghai for one night, please")
            await page.press("#input", "Enter")
            await expect(page.locator(".msg.user").first).to_have_text("Beijing to Shanghai for one night, please")
            await asyncio.wait_for(model.held.wait(), 10)
            await expect(page.locator("details.timeline li.step").first).to_be_visible()
            await expect(page.locator("details.timeline li.step").first).to_have_text("Step 1 / 20")
            await expect(page.locator("#input")).to_be_disabled()  # the seed's lock while the agent works
            await page.screenshot(path=str(ARTIFACTS / "web-e2e-step.png"), full_page=True)
            model.gate.set()  # type: ignore[union-attr]

            question = page.locator(".question .q-text")
            await expect(question).to_have_text(QUESTION_EN)
            await expect(page.locator("#input")).to_have_class("answering")
            await expect(page.locator("#input")).to_be_enabled()
            await expect(page.locator(".question button.option")).to_have_count(len(DAYS))
            await page.screenshot(path=str(ARTIFACTS / "web-e2e-question.png"), full_page=True)

            # a reload while the question waits shows it again, still answerable
            await page.reload()
            await expect(page.locator(".question:not(.answered) .q-text")).to_have_text(QUESTION_EN)
            await expect(page.locator(".question:not(.answered) .q-text")).to_have_count(1)
            await expect(page.locator("#input")).to_have_class("answering")
            await expect(page.locator("details.timeline li.step")).to_have_count(0)  # steps live only in the stream

            await page.fill("#input", DAYS[1])
            await page.press("#input", "Enter")
            card = page.locator(".plan-card")
            await expect(card).to_be_visible()
            await expect(card).to_contain_text("G1")
            await expect(card).to_contain_text("北京南 → 上海虹桥")
            await expect(card).to_contain_text("Bund Riverside Hotel")
            await expect(card).to_contain_text("The Bund")
            await expect(card.locator(".total")).to_contain_text("1,033")
            await expect(card.locator(".sandbox")).to_be_visible()
            await expect(page.locator(".msg.assistant").last).to_contain_text(DAYS[1])
            await expect(page.locator("#input")).to_be_enabled()
            await expect(page.locator("details.timeline summary").last).to_contain_text("Done")
            await page.screenshot(path=str(ARTIFACTS / "web-e2e-plan.png"), full_page=True)

            sideways = await page.evaluate("document.documentElement.scrollWidth > document.documentElement.clientWidth")
            assert not sideways, "the page scrolls sideways on a phone-width screen"

            # a reload rebuilds the conversation from the API
            await page.reload()
            await expect(page.locator(".plan-card")).to_be_visible()
            await expect(page.locator(".msg.user").first).to_have_text("Beijing to Shanghai for one night, please")
            await expect(page.locator(".question.answered .q-text")).to_have_text(QUESTION_EN)
            assert errors == []
        finally:
            await context.close()
    assert chromium


async def test_the_page_speaks_chinese_to_a_chinese_browser(stack: WebStack, tmp_path: Path):
    from playwright.async_api import async_playwright, expect

    async with async_playwright() as pw:
        context = await _launch(pw, tmp_path / "profile-zh", "zh-CN", {"width": 1280, "height": 800})
        try:
            page = context.pages[0] if context.pages else await context.new_page()
            page.set_default_timeout(10000)
            await page.goto(stack.base_url + "/")
            await expect(page.locator("#title")).to_have_text("行程规划助手")
            await expect(page.locator("#send")).to_have_text("发送")
            await page.fill("#input", "北京去上海玩一天")
            await page.click("#send")
            await expect(page.locator(".question .q-text")).to_have_text("你想哪天出发？")
            await page.locator(".question button.option", has_text=DAYS[0]).click()
            await expect(page.locator(".plan-card")).to_contain_text("合计")
            await expect(page.locator(".plan-card .sandbox")).to_contain_text("沙盒数据")
            await page.screenshot(path=str(ARTIFACTS / "web-e2e-zh.png"), full_page=True)
        finally:
            await context.close()
