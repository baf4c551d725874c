"""The operator's page at /admin: refused without BOT_ADMIN_TOKEN; shows a waiting question, a
failed delivery (whose retry sends it) and a run's cost; a chat's transcript on click. Plain
HTTP against the real server, then the same story in real Chromium."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from adapters.runtime import Runtime, build_runtime
from agent_core.events import AnswerReady, Verdict
from bot.surface import ChatKey, DeliveryError, PartLog, RunInfo
from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.spine_support import (
    RecordingSurface,
    make_llm,
    make_settings,
    make_tools,
    msg,
    plain_prompt,
)

TOKEN = "admin-token-for-the-tests-0123"
A = ChatKey("test", "admin-a")  # its answer cannot be delivered until the "user" unblocks the bot
B = ChatKey("test", "admin-b")  # its question waits


@dataclass
class BlockedSurface(RecordingSurface):
    blocked: bool = True

    async def post_answer(self, chat: ChatKey, answer: AnswerReady, verdict: Verdict | None, run: RunInfo,
                          parts: PartLog) -> None:
        if self.blocked:
            raise DeliveryError("403 Forbidden: bot was blocked by the user", permanent=True)
        await super().post_answer(chat, answer, verdict, run, parts)


@dataclass
class Stack:
    runtime: Runtime
    surface: BlockedSurface
    base_url: str


@asynccontextmanager
async def admin_stack(tmp_path: Path) -> AsyncIterator[Stack]:
    """Chat A's answer failed for good; chat B's question waits."""
    surface = BlockedSurface()
    scripts = {
        "a": [reply("Go to Hangzhou by train.", usage=(1000, 100))],
        "b": [reply(tool_calls=[call("ask_human", {"inquire": "Which date do you leave?"}, id="qb")], usage=(10, 1))],
    }
    settings = make_settings(tmp_path, admin_token=TOKEN, host="127.0.0.1", port=0,
                             llm_prices={"gpt-4o-mini": (10.0, 100.0)})
    async with FakeOpenAI(scripts=scripts) as fake:
        rt = build_runtime(settings, model=make_llm(fake.base_url), tools=make_tools(), prompt=plain_prompt,
                           extra_surfaces=[surface])
        await rt.start()
        try:
            await rt.manager.submit(msg(A, "[conv:a] a day trip"))
            await rt.manager.submit(msg(B, "[conv:b] a weekend away"))
            await surface.wait_count("question", 1, B)
            await rt.manager.wait_until_idle(A, 10)
            await rt.manager.wait_until_idle(B, 10)
            assert rt.server is not None
            yield Stack(rt, surface, rt.server.base_url)
        finally:
            await rt.stop()


def section(page: str, anchor: str) -> str:
    start = page.index(f"id={anchor}>")
    end = page.find("<h2", start)
    return page[start:end if end > 0 else None]


async def test_the_admin_page_over_http(tmp_path: Path):
    async with admin_stack(tmp_path) as stack, httpx.AsyncClient(base_url=stack.base_url) as http:
        for headers in ({}, {"authorization": "Bearer wrong-token-wrong-token"}):
            refused = await http.get("/admin", headers=headers)
            assert refused.status_code == 401 and "Which date" not in refused.text
        assert (await http.post("/admin/deliveries/1/retry")).status_code == 401
        auth = {"authorization": f"Bearer {TOKEN}"}
        page = (await http.get("/admin", headers=auth)).text
        assert "Which date do you leave?" in section(page, "questions")
        assert re.search(r"in 59m \d\ds|in 1h 00m", section(page, "questions"))  # BOT_HUMAN_TIMEOUT_S=3600
        failed = section(page, "failed")
        assert "bot was blocked by the user" in failed and str(A) in failed
        runs = section(page, "runs")
        assert "0.0200" in runs  # 1000 in at $10/M + 100 out at $100/M
        assert "1000 / 100" in runs and "answered" in runs
        [retry_path] = re.findall(r"action='(/admin/deliveries/\d+/retry)'", failed)

        stack.surface.blocked = False  # the person unblocked the bot: the operator presses retry
        done = await http.post(retry_path, headers=auth)
        assert done.status_code == 303
        await stack.surface.wait_count("answer", 1, A)
        assert stack.surface.of("answer", A)[0].text == "Go to Hangzhou by train."
        assert "No delivery has failed." in (await http.get("/admin", headers=auth)).text

        session = await stack.runtime.store.get_session(str(A))
        assert session is not None
        transcript = (await http.get(f"/admin/sessions/{session.id}", headers=auth)).text
        assert "a day trip" in transcript and "Go to Hangzhou by train." in transcript

        wrong = await http.post("/admin/login", data={"token": "nope"})
        assert wrong.status_code == 401
        logged = await http.post("/admin/login", data={"token": TOKEN})
        assert logged.status_code == 303 and "httponly" in logged.headers["set-cookie"].lower()
        assert (await http.get("/admin")).status_code == 200  # the cookie now


async def test_without_a_token_setting_there_is_no_admin_page(tmp_path: Path):
    settings = make_settings(tmp_path, host="127.0.0.1", port=0)
    rt = build_runtime(settings, model=make_llm("http://127.0.0.1:9/v1"), tools=make_tools(), prompt=plain_prompt)
    await rt.start()
    try:
        assert rt.server is not None
        async with httpx.AsyncClient(base_url=rt.server.base_url) as http:
            assert (await http.get("/admin")).status_code == 404
    finally:
        await rt.stop()


@pytest.mark.browser
async def test_the_admin_page_in_chromium(tmp_path: Path):
    from playwright.async_api import async_playwright, expect

    from tests.test_browser_e2e import _launch

    async with admin_stack(tmp_path) as stack, async_playwright() as pw:
        context = await _launch(pw, tmp_path / "profile", "en-US", {"width": 1200, "height": 900})
        try:
            page = context.pages[0] if context.pages else await context.new_page()
            page.set_default_timeout(10000)
            errors: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            await page.goto(stack.base_url + "/admin")
            await expect(page.locator("h1")).to_have_text("Operator's page")
            await expect(page.locator("text=Which date do you leave?")).to_have_count(0)  # refused
            errors.clear()  # the refusal itself is a 401, which Chromium logs
            await page.fill("input[name=token]", TOKEN)
            await page.click("text=Open")
            await expect(page.locator("#questions + table")).to_contain_text("Which date do you leave?")
            await expect(page.locator("#failed + table")).to_contain_text("bot was blocked by the user")
            await expect(page.locator("#runs + table")).to_contain_text("0.0200")
            stack.surface.blocked = False
            await page.click("#failed + table button:has-text('retry')")
            await expect(page.locator("text=No delivery has failed.")).to_be_visible()
            await stack.surface.wait_count("answer", 1, A)
            await page.click(f"#chats + table a:has-text('{A}')")
            await expect(page.locator("table")).to_contain_text("Go to Hangzhou by train.")
            assert [e for e in errors if "favicon" not in e] == []  # nothing blocked by the page's CSP
        finally:
            await context.close()
