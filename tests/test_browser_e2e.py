"""The web chat in a real headless Chromium (Debian's build driven by Playwright's Python API).

Type a request, see a step, see the question, answer it, see the plan card; reload and find the
conversation again; on a phone-width screen nothing scrolls sideways. Screenshots go to
test-artifacts/.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.scripted_trip import DAYS, QUESTION_EN
from tests.web_runtime import WebStack, web_model, web_settings, web_stack

pytestmark = pytest.mark.browser

# emoji and dingbats that render as boxes where no emoji font is installed
EMOJI = re.compile("[\U0001F300-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF]")

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
            # a missing favicon, a blocked inline script or style: each is a console error
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            await page.goto(stack.base_url + "/")
            await expect(page.locator("#title")).to_have_text("Trip planner")
            await expect(page.locator("#empty")).to_be_visible()
            # icons are inline SVG, never emoji that need an emoji font
            assert await page.locator("#loc svg use").count() == 1
            assert not EMOJI.search(await page.evaluate("document.body.innerText"))
            await page.wait_for_load_state("networkidle")  # the favicon has been asked for by now

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
            await expect(card).to_contain_text("北京南 (Beijing South) → 上海虹桥 (Shanghai Hongqiao)")  # English beside
            await expect(card).to_contain_text("Bund Riverside Hotel")
            await expect(card.locator(".row", has_text="The Bund").locator(".price")).to_have_text("Free")
            await expect(card.locator(".total")).to_contain_text("1,033")
            await expect(card.locator(".sandbox")).to_be_visible()
            # the plan shows once, as the card; its text is folded away for copying
            await expect(page.locator(".msg.assistant")).to_have_count(0)
            await expect(card.locator("details.plan-text pre")).to_be_hidden()
            await expect(card.locator("details.plan-text pre")).to_contain_text(DAYS[1])
            await expect(card.locator("button.copy")).to_be_visible()
            await expect(page.locator("#input")).to_be_enabled()
            await expect(page.locator("details.timeline summary").last).to_contain_text("Done")
            # no timeline header still waits for an answer once the run is over
            await expect(page.locator("details.timeline summary", has_text="waiting for your answer")).to_have_count(0)
            # thumbs up under the plan: kept with its run, said on the card
            await card.locator(".plan-feedback button[data-rating=up]").click()
            await expect(card.locator(".plan-feedback .note")).to_have_text("Thanks for the feedback!")
            await expect(card.locator(".plan-feedback button[data-rating=up]")).to_have_attribute("aria-pressed", "true")
            assert [f.rating for f in await stack.store.recent_feedback()] == ["up"]
            await page.screenshot(path=str(ARTIFACTS / "web-e2e-plan.png"), full_page=True)

            sideways = await page.evaluate("document.documentElement.scrollWidth > document.documentElement.clientWidth")
            assert not sideways, "the page scrolls sideways on a phone-width screen"

            # a reload rebuilds the conversation from the API
            await page.reload()
            await expect(page.locator(".plan-card")).to_be_visible()
            await expect(page.locator(".msg.user").first).to_have_text("Beijing to Shanghai for one night, please")
            await expect(page.locator(".question.answered .q-text")).to_have_text(QUESTION_EN)
            await expect(page.locator(".plan-card")).to_have_count(1)
            assert not EMOJI.search(await page.evaluate("document.body.innerText"))
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


async def test_commands_never_stick_the_page_and_reply_in_the_browsers_language(tmp_path: Path):
    from playwright.async_api import async_playwright, expect

    async with web_stack(tmp_path / "bot.sqlite3") as stack, async_playwright() as pw:
        context = await _launch(pw, tmp_path / "profile-cmd", "en-US", {"width": 390, "height": 844})
        try:
            page = context.pages[0] if context.pages else await context.new_page()
            page.set_default_timeout(10000)
            await page.goto(stack.base_url + "/")
            for command, reply in (("/help", "I plan trips"), ("/status", "Idle"),
                                   ("/cancel", "nothing running to cancel"), ("/new", "Fresh start"),
                                   ("/foo", "/foo: no such command.")):
                await page.fill("#input", command)
                await page.press("#input", "Enter")
                await expect(page.locator(".msg.notice").last).to_contain_text(reply)
                await expect(page.locator("#input")).to_be_enabled()
                await expect(page.locator("#status")).to_have_text("")
                await expect(page.locator("details.timeline")).to_have_count(0)
            await page.screenshot(path=str(ARTIFACTS / "web-e2e-commands.png"), full_page=True)
            # a reload of a conversation that holds only commands greets again
            await page.reload()
            await expect(page.locator("#empty")).to_be_visible()
            await expect(page.locator("#input")).to_be_enabled()
            # a command while a question waits is answered and leaves the question waiting
            await page.fill("#input", "Beijing to Shanghai for one night")
            await page.press("#input", "Enter")
            await expect(page.locator(".question:not(.answered) .q-text")).to_have_text(QUESTION_EN)
            await page.fill("#input", "/status")
            await page.press("#input", "Enter")
            await expect(page.locator(".msg.notice").last).to_contain_text("Waiting for your answer")
            await expect(page.locator("#input")).to_have_class("answering")
            await page.fill("#input", "/cancel")
            await page.press("#input", "Enter")
            await expect(page.locator(".msg.notice").last).to_contain_text("Stopped")
            await expect(page.locator(".question:not(.answered)")).to_have_count(0)
            await expect(page.locator("#input")).to_be_enabled()
            await expect(page.locator("details.timeline summary", has_text="waiting for your answer")).to_have_count(0)
        finally:
            await context.close()


async def test_the_placeholder_fits_a_phone_screen(stack: WebStack, tmp_path: Path):
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        for locale in ("en-US", "zh-CN"):
            context = await _launch(pw, tmp_path / f"profile-phone-{locale}", locale, {"width": 360, "height": 740})
            try:
                page = context.pages[0] if context.pages else await context.new_page()
                await page.goto(stack.base_url + "/")
                room = await page.evaluate(
                    """() => {
                        const input = document.getElementById("input");
                        const style = getComputedStyle(input);
                        const ctx = document.createElement("canvas").getContext("2d");
                        ctx.font = style.font;
                        const inner = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
                        return [inner, ctx.measureText(input.placeholder).width, input.placeholder];
                    }"""
                )
                assert room[1] <= room[0], f"the placeholder {room[2]!r} is clipped on a phone: {room}"
            finally:
                await context.close()


async def test_the_page_shows_a_rate_limit_and_asks_for_the_token(tmp_path: Path):
    from playwright.async_api import async_playwright, expect

    token = "a-token-of-sixteen-chars-or-more"
    settings = web_settings(tmp_path / "bot.sqlite3", BOT_WEB_TOKEN=token, BOT_RATE_PER_USER=1)
    async with web_stack(tmp_path / "bot.sqlite3", settings=settings) as stack, async_playwright() as pw:
        context = await _launch(pw, tmp_path / "profile-limits", "en-US", {"width": 390, "height": 844})
        try:
            page = context.pages[0] if context.pages else await context.new_page()
            page.set_default_timeout(10000)
            await page.goto(stack.base_url + "/")
            await expect(page.locator("#token")).to_be_visible()
            await expect(page.locator("#input")).to_be_hidden()
            await page.fill("#token", "not-the-token-at-all")
            await page.press("#token", "Enter")
            await expect(page.locator("#hint")).to_contain_text("not right")
            await page.fill("#token", token)
            await page.press("#token", "Enter")
            await expect(page.locator("#input")).to_be_visible()
            for _ in range(4):  # a burst of 3 a chat, then the limit
                await page.fill("#input", "/help")
                await page.press("#input", "Enter")
            await expect(page.locator(".msg.limited")).to_contain_text("wait")
            await expect(page.locator("#input")).to_be_enabled()
            await expect(page.locator(".msg.notice")).to_have_count(3)  # the stream (with the cookie) works
            await page.screenshot(path=str(ARTIFACTS / "web-e2e-limited.png"), full_page=True)
        finally:
            await context.close()
