"""The web page in headless Chromium takes a withdrawn text away at once (`text_reset`): while the
model has not begun its revision, the page shows neither the draft nor anything in its place,
then the revision grows there and the answer shows once (tests.revised_draft's run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.llm import LLM
from agent_core.llm_config import LLMConfig
from tests.fakes.openai_server import FakeOpenAI
from tests.revised_draft import DRAFT, FINAL, revised_script, revising_tools
from tests.test_browser_e2e import _chromium, _launch
from tests.web_runtime import web_stack

pytestmark = pytest.mark.browser


async def test_the_page_clears_a_withdrawn_draft_before_the_revision_arrives(tmp_path: Path) -> None:
    _chromium()
    from playwright.async_api import async_playwright, expect

    script = revised_script(chunk_gap_ms=30)
    script[2].gate = "revise"  # the revision waits until the page has been looked at
    async with FakeOpenAI(script) as model, \
            web_stack(tmp_path / "bot.sqlite3", model=LLM(LLMConfig(model="gpt-4o-mini", api_key="sk-test",
                                                                     base_url=model.base_url, timeout_s=10)),
                      tools=revising_tools()) as stack, async_playwright() as pw:
        context = await _launch(pw, tmp_path / "profile", "en-US", {"width": 1280, "height": 800})
        try:
            page = context.pages[0] if context.pages else await context.new_page()
            page.set_default_timeout(10000)
            await page.goto(stack.base_url + "/")
            await page.fill("#input", "Hangzhou to Beijing, one night")
            await page.press("#input", "Enter")
            streaming = page.locator(".msg.assistant.streaming")
            await expect(streaming).to_contain_text("Day 1: take G7648")  # the draft, as it was written
            await model.wait_for(lambda f: f.request_count >= 3)  # the revision is asked for, and held
            await expect(streaming).to_have_text("")  # withdrawn: gone at once, its place kept
            await expect(page.locator("#input")).to_be_disabled()  # the run still works
            model.gate("revise").set()
            await expect(page.locator(".msg.assistant", has_text="Revised:")).to_have_count(1)
            await expect(page.locator(".msg.assistant.streaming")).to_have_count(0)
            assert DRAFT[:20] not in await page.evaluate("document.body.innerText")
            assert FINAL[:30] in await page.evaluate("document.body.innerText")
        finally:
            await context.close()
        model.assert_complete()
