"""A reload keeps everything: the session view a (re)loading page reads gives each answer back
with its review and its file links, and mid-run the steps so far and the answer as far as it is
written, so the stream the page opens next goes on from there (nothing twice, nothing lost)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from agent_core.llm import LLM
from agent_core.llm_config import LLMConfig
from bot.run.review import PlanValidator
from bot.surface import ChatKey
from tests.fakes.openai_server import FakeOpenAI, reply
from tests.team_support import TeamScript, team_request
from tests.validator_support import Sandbox, load_sandbox
from tests.web_runtime import web_settings, web_stack
from tests.web_sse import SseReader

LABELS = ("Ana", "Bo", "Chen")
TEXT = "Day 1: take the G1 at 09:00 to Shanghai, check in near the Bund, and walk Nanjing Road at night."


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return load_sandbox()


async def test_a_reload_after_a_team_plan_keeps_its_review_and_its_files(tmp_path: Path, sandbox: Sandbox) -> None:
    reviewer = PlanValidator(facts=sandbox.facts(), tools=sandbox.tools, rubric_model=None)
    # graded, and posted as graded: the scripted team plan is not re-planned
    settings = web_settings(tmp_path / "bot.sqlite3", BOT_VALIDATE="on", BOT_VALIDATE_ROUNDS=0)
    async with web_stack(tmp_path / "bot.sqlite3", model=TeamScript(LABELS), settings=settings, reviewer=reviewer) as s, \
            httpx.AsyncClient(base_url=s.base_url, timeout=10) as client:  # type: ignore[arg-type]
        sid = str((await client.post("/api/chat", json={"message": team_request(LABELS)})).json()["session_id"])
        async with client.stream("GET", f"/api/sessions/{sid}/events") as events:
            reader = SseReader(events)
            for _ in LABELS:
                await reader.until("human_input_request")
            for q in await s.manager.pending_questions(ChatKey("web", sid)):
                ack = await client.post("/api/human_response",
                                         json={"session_id": sid, "response": "any time", "tool_call_id": q.tool_call_id})
                assert ack.status_code == 200, ack.text
            verdict = (await reader.until("verdict", within=20)).json()
            files = [(await reader.until("file", within=10)).json() for _ in range(2)]
        await s.manager.wait_until_idle(ChatKey("web", sid), 10)

        view = (await client.get(f"/api/sessions/{sid}")).json()  # what a reloaded page reads
        [planned] = [e for e in view["entries"] if e.get("plan")]
        assert planned["verdict"]["label"] == verdict["label"] and planned["verdict"]["reasons"] == verdict["reasons"]
        assert [(f["filename"], f["url"]) for f in planned["files"]] == [(f["filename"], f["url"]) for f in files]
        for f in planned["files"]:
            assert (await client.get(f["url"])).status_code == 200
        costs = planned["costs"]  # the card's rows come back priced as they were
        assert round(sum(line["amount"] for line in costs["lines"]), 2) == costs["total"] == planned["plan"]["total_cost"]
        assert {line["who"] for line in costs["lines"]} >= set(LABELS)  # everyone's own legs
        assert [share["who"] for share in costs["shares"]] == list(LABELS)
        assert view["progress"] == []  # nothing is running


def _llm(fake: FakeOpenAI) -> LLM:
    return LLM(LLMConfig(model="gpt-4o-mini", api_key="sk-test", base_url=fake.base_url, timeout_s=5, max_retries=0))


async def _view_with_text(client: httpx.AsyncClient, sid: str) -> dict[str, Any]:
    async with asyncio.timeout(10):
        while True:
            view = (await client.get(f"/api/sessions/{sid}")).json()
            if any(p["event"] == "delta" and p["data"]["text"] for p in view["progress"]):
                return dict(view)
            await asyncio.sleep(0.02)


async def test_a_reload_mid_answer_keeps_the_steps_and_goes_on_from_the_words_written(tmp_path: Path) -> None:
    script = [reply(f"<answer>{TEXT}</answer>", chunk_chars=5, hold_after=6, hold_gate="go")]
    async with FakeOpenAI(script) as fake, web_stack(tmp_path / "bot.sqlite3", model=_llm(fake)) as stack, \
            httpx.AsyncClient(base_url=stack.base_url, timeout=10) as client:
        sid = (await client.post("/api/chat", json={"message": "Beijing to Shanghai"})).json()["session_id"]
        view = await _view_with_text(client, sid)  # the page reloads while the answer is being written
        assert view["state"] == "working"
        events = [p["event"] for p in view["progress"]]
        assert events[0] == "step" and view["progress"][0]["data"]["step"] == 1  # the step stays
        assert events.count("delta") == 1  # the pieces so far, joined
        written = next(p["data"]["text"] for p in view["progress"] if p["event"] == "delta")
        assert TEXT.startswith(written) and 0 < len(written) < len(TEXT)
        async with client.stream("GET", f"/api/sessions/{sid}/events", params={"after": view["last_event_id"]}) as res:
            reader = SseReader(res)
            fake.gate("go").set()
            answer = await reader.until("answer")
        rest = "".join(e.json()["text"] for e in reader.seen if e.event == "delta")
        assert written + rest == answer.json()["text"] == TEXT  # nothing twice, nothing lost
        assert "step" not in [e.event for e in reader.seen]  # the step came with the view, not again
        await stack.manager.wait_until_idle(ChatKey("web", sid), 5)
        after = (await client.get(f"/api/sessions/{sid}")).json()
        assert after["progress"] == [] and after["entries"][-1]["text"] == TEXT
        fake.assert_complete()
