"""Reload keeps everything, in a real headless Chromium: a finished team plan keeps its review
badge, its file links and everyone's legs; a reload while the answer is being written keeps the
steps and the words so far, and the answer goes on from there instead of restarting mid-sentence; a
reload before a plan is delivered shows it once."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import httpx
import pytest

from agent_core.llm import LLM
from agent_core.llm_config import LLMConfig
from bot.run.review import PlanValidator
from bot.surface import ChatKey
from tests.fakes.openai_server import FakeOpenAI, reply
from tests.team_support import TeamScript, team_request
from tests.test_browser_e2e import _chromium, _launch
from tests.test_web_reload_once import HeldAnswers
from tests.validator_support import load_sandbox
from tests.web_runtime import web_settings, web_stack
from tests.web_sse import SseReader

pytestmark = pytest.mark.browser

LABELS = ("Ana", "Bo", "Chen")
TEXT = "Day 1: take the G1 at 09:00 to Shanghai, check in near the Bund, and walk Nanjing Road at night."


async def test_a_finished_team_plan_keeps_its_review_and_files_after_a_reload(tmp_path: Path) -> None:
    _chromium()
    from playwright.async_api import async_playwright, expect

    sandbox = load_sandbox()
    reviewer = PlanValidator(facts=sandbox.facts(), tools=sandbox.tools, rubric_model=None)
    settings = web_settings(tmp_path / "bot.sqlite3", BOT_VALIDATE="on", BOT_VALIDATE_ROUNDS=0)
    async with web_stack(tmp_path / "bot.sqlite3", model=TeamScript(LABELS), settings=settings, reviewer=reviewer) as s, \
            httpx.AsyncClient(base_url=s.base_url, timeout=10) as client, async_playwright() as pw:  # type: ignore[arg-type]
        sid = str((await client.post("/api/chat", json={"message": team_request(LABELS)})).json()["session_id"])
        async with client.stream("GET", f"/api/sessions/{sid}/events") as events:
            reader = SseReader(events)
            for _ in LABELS:
                await reader.until("human_input_request")
            for q in await s.manager.pending_questions(ChatKey("web", sid)):
                await client.post("/api/human_response",
                                  json={"session_id": sid, "response": "any time", "tool_call_id": q.tool_call_id})
            for _ in range(2):
                await reader.until("file", within=20)
        await s.manager.wait_until_idle(ChatKey("web", sid), 10)

        context = await _launch(pw, tmp_path / "profile", "en-US", {"width": 1280, "height": 900})
        try:
            await context.add_init_script(f"localStorage.setItem('travelbot.session', '{sid}')")
            page = context.pages[0] if context.pages else await context.new_page()
            page.set_default_timeout(10000)
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            await page.goto(s.base_url + "/")
            for _ in range(2):  # the first load, then a reload: the same page both times
                card = page.locator(".plan-card")
                await expect(card).to_have_count(1)
                await expect(page.locator(".verdict")).to_have_count(1)
                await expect(page.locator(".verdict")).to_contain_text("Review: ")
                await expect(page.locator("a.file")).to_have_count(2)
                assert await page.locator("a.file").evaluate_all("(links) => links.map((a) => a.download)") == [
                    "team-trip-2026-12-12.ics", "team-trip-2026-12-12-costs.csv"]
                await expect(card.locator(".person")).to_have_count(3)  # everyone's journey, and what each pays
                for label in LABELS:
                    await expect(card.locator(".person", has_text=f"{label} · ")).to_contain_text("pays ¥")
                amounts = await card.locator(".row .price").evaluate_all("(els) => els.map((e) => Number(e.dataset.amount || 0))")
                total = float(await card.locator(".total .price").get_attribute("data-amount") or "nan")
                assert round(sum(amounts), 2) == total
                await page.reload()
            assert errors == []
        finally:
            await context.close()


async def test_after_a_restart_a_reload_keeps_the_review_the_files_and_the_rating(tmp_path: Path) -> None:
    _chromium()
    from playwright.async_api import async_playwright, expect

    sandbox = load_sandbox()
    reviewer = PlanValidator(facts=sandbox.facts(), tools=sandbox.tools, rubric_model=None)
    db = tmp_path / "bot.sqlite3"
    settings = web_settings(db, BOT_VALIDATE="on", BOT_VALIDATE_ROUNDS=0)
    async with web_stack(db, model=TeamScript(LABELS), settings=settings, reviewer=reviewer) as s, \
            httpx.AsyncClient(base_url=s.base_url, timeout=10) as client:
        sid = str((await client.post("/api/chat", json={"message": team_request(LABELS)})).json()["session_id"])
        async with client.stream("GET", f"/api/sessions/{sid}/events") as events:
            reader = SseReader(events)
            for _ in LABELS:
                await reader.until("human_input_request")
            for q in await s.manager.pending_questions(ChatKey("web", sid)):
                await client.post("/api/human_response",
                                  json={"session_id": sid, "response": "any time", "tool_call_id": q.tool_call_id})
            run = (await reader.until("answer", within=20)).json()["run"]
            for _ in range(2):
                await reader.until("file", within=20)
        await s.manager.wait_until_idle(ChatKey("web", sid), 10)
        res = await client.post(f"/api/sessions/{sid}/feedback", json={"run": run, "rating": "up"})
        assert res.status_code == 200, res.text

    # the bot restarted: the page a person reloads is served by a new process on the same database
    async with web_stack(db, model=TeamScript(LABELS), settings=settings, reviewer=reviewer) as s, \
            async_playwright() as pw:
        context = await _launch(pw, tmp_path / "profile", "en-US", {"width": 1280, "height": 900})
        try:
            await context.add_init_script(f"localStorage.setItem('travelbot.session', '{sid}')")
            page = context.pages[0] if context.pages else await context.new_page()
            page.set_default_timeout(10000)
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            await page.goto(s.base_url + "/")
            card = page.locator(".plan-card")
            await expect(card).to_have_count(1)
            await expect(page.locator(".verdict")).to_contain_text("Review: ")
            await expect(page.locator("a.file")).to_have_count(2)
            up, down = (card.locator(f".plan-feedback button[data-rating={r}]") for r in ("up", "down"))
            await expect(up).to_have_attribute("aria-pressed", "true")  # the rating given before the restart
            await expect(down).to_have_attribute("aria-pressed", "false")
            await down.click()  # still rateable: the person changes their mind
            await expect(down).to_have_attribute("aria-pressed", "true")
            await expect(up).to_have_attribute("aria-pressed", "false")
            assert [f.rating for f in await s.store.recent_feedback()] == ["down"]
            assert errors == []
        finally:
            await context.close()


async def test_a_reload_mid_answer_keeps_the_steps_and_the_words_so_far(tmp_path: Path) -> None:
    _chromium()
    from playwright.async_api import async_playwright, expect

    script = [reply(f"<answer>{TEXT}</answer>", chunk_chars=5, hold_after=6, hold_gate="go")]
    async with FakeOpenAI(script) as fake, \
            web_stack(tmp_path / "bot.sqlite3", model=LLM(LLMConfig(
                model="gpt-4o-mini", api_key="sk-test", base_url=fake.base_url, timeout_s=5, max_retries=0))) as s, \
            async_playwright() as pw:
        context = await _launch(pw, tmp_path / "profile", "en-US", {"width": 1280, "height": 900})
        try:
            page = context.pages[0] if context.pages else await context.new_page()
            page.set_default_timeout(10000)
            await page.goto(s.base_url + "/")
            await page.fill("#input", "Beijing to Shanghai")
            await page.press("#input", "Enter")
            draft = page.locator(".msg.assistant.streaming")
            await expect(draft).to_have_text(re.compile(r"^Day 1: t"))  # the model holds after six pieces
            await expect(page.locator("details.timeline li.step")).to_have_count(1)
            before = await draft.text_content() or ""
            assert TEXT.startswith(before)

            await page.reload()
            await expect(page.locator("details.timeline li.step")).to_have_count(1)  # the step stays
            await expect(draft).to_have_text(re.compile("^" + re.escape(before)))  # the words so far, from their start
            fake.gate("go").set()
            answer = page.locator(".msg.assistant")
            await expect(answer).to_have_text(TEXT)  # goes on from there: not restarted mid-sentence
            await expect(answer).to_have_count(1)
            async with asyncio.timeout(5):
                while await page.locator(".msg.assistant.streaming").count():
                    await asyncio.sleep(0.02)
            await expect(page.locator("#input")).to_be_enabled()
        finally:
            await context.close()
        fake.assert_complete()


async def test_a_reload_before_the_plan_is_delivered_shows_it_once(tmp_path: Path) -> None:
    _chromium()
    from playwright.async_api import async_playwright, expect

    sandbox = load_sandbox()
    reviewer = PlanValidator(facts=sandbox.facts(), tools=sandbox.tools, rubric_model=None)
    settings = web_settings(tmp_path / "bot.sqlite3", BOT_VALIDATE="on", BOT_VALIDATE_ROUNDS=0)
    async with web_stack(tmp_path / "bot.sqlite3", model=TeamScript(LABELS), settings=settings, reviewer=reviewer,
                         adapter=HeldAnswers) as s, \
            httpx.AsyncClient(base_url=s.base_url, timeout=10) as client, async_playwright() as pw:
        web = s.web
        assert isinstance(web, HeldAnswers)
        sid = str((await client.post("/api/chat", json={"message": team_request(LABELS)})).json()["session_id"])
        async with client.stream("GET", f"/api/sessions/{sid}/events") as events:
            reader = SseReader(events)
            for _ in LABELS:
                await reader.until("human_input_request")
            for q in await s.manager.pending_questions(ChatKey("web", sid)):
                await client.post("/api/human_response",
                                  json={"session_id": sid, "response": "any time", "tool_call_id": q.tool_call_id})
            async with asyncio.timeout(20):
                await web.entered.wait()  # the plan is stored; its delivery waits

        context = await _launch(pw, tmp_path / "profile", "en-US", {"width": 1280, "height": 900})
        try:
            await context.add_init_script(f"localStorage.setItem('travelbot.session', '{sid}')")
            page = context.pages[0] if context.pages else await context.new_page()
            page.set_default_timeout(10000)
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            await page.goto(s.base_url + "/")
            await expect(page.locator(".plan-card")).to_have_count(1)  # drawn from the store at once
            web.release.set()  # delivered now, while the page listens
            await s.manager.wait_until_idle(ChatKey("web", sid), 10)
            await client.post("/api/chat", json={"session_id": sid, "message": "/help"})
            await expect(page.locator(".msg.notice")).to_have_count(1)  # the stream has brought all before it
            await expect(page.locator(".plan-card")).to_have_count(1)
            await expect(page.locator(".verdict")).to_have_count(1)
            await expect(page.locator("a.file")).to_have_count(2)
            assert errors == []
        finally:
            await context.close()
