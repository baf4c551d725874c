"""What a person saw on the web page does not vanish when the bot restarts: a reload served by a
new process on the same database gives each answer back with its review, its file links and its
👍 / 👎 (the rating already given shown as given), read from the store, not from the old
process's event log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.run.review import PlanValidator
from bot.surface import ChatKey
from tests.scripted_trip import DAYS
from tests.team_support import TeamScript, team_request
from tests.validator_support import Sandbox, load_sandbox
from tests.web_runtime import web_settings, web_stack
from tests.web_sse import SseReader

LABELS = ("Ana", "Bo", "Chen")


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return load_sandbox()


def _planned(view: dict[str, Any]) -> dict[str, Any]:
    [planned] = [e for e in view["entries"] if e.get("plan")]
    return planned


async def test_a_reload_after_a_restart_keeps_the_review_and_the_files(tmp_path: Path, sandbox: Sandbox) -> None:
    db = tmp_path / "bot.sqlite3"
    reviewer = PlanValidator(facts=sandbox.facts(), tools=sandbox.tools, rubric_model=None)
    settings = web_settings(db, BOT_VALIDATE="on", BOT_VALIDATE_ROUNDS=0)
    async with web_stack(db, model=TeamScript(LABELS), settings=settings, reviewer=reviewer) as s, \
            httpx.AsyncClient(base_url=s.base_url, timeout=10) as client:
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
        before = _planned((await client.get(f"/api/sessions/{sid}")).json())

    # the bot restarts: a new process (a new runtime, an empty event log) on the same database
    async with web_stack(db, model=TeamScript(LABELS), settings=settings, reviewer=reviewer) as s, \
            httpx.AsyncClient(base_url=s.base_url, timeout=10) as client:
        view = (await client.get(f"/api/sessions/{sid}")).json()
        planned = _planned(view)
        assert planned["verdict"] is not None, "the review vanished with the restart"
        for field in ("label", "label_en", "reasons", "failed_checks", "rubric_skipped", "rounds", "graded"):
            assert planned["verdict"][field] == verdict[field] == before["verdict"][field]
        assert [(f["filename"], f["title"], f["url"]) for f in planned["files"]] == \
            [(f["filename"], f["title"], f["url"]) for f in files]
        for f in planned["files"]:
            assert (await client.get(f["url"])).status_code == 200
        assert planned["run"] == before["run"] is not None  # still rateable
        assert view["progress"] == []


async def _plan(client: httpx.AsyncClient) -> tuple[str, str]:
    """A session with a plan: its id and the run its answer event names."""
    sid = str((await client.post("/api/chat", json={"message": "Beijing to Shanghai, please"})).json()["session_id"])
    async with client.stream("GET", f"/api/sessions/{sid}/events") as res:
        reader = SseReader(res)
        await reader.until("human_input_request")
        await client.post("/api/human_response", json={"session_id": sid, "response": DAYS[0], "option": True})
        answer = (await reader.until("answer")).json()
    return sid, str(answer["run"])


async def test_every_answer_shown_after_a_reload_can_be_rated_and_shows_its_rating(tmp_path: Path) -> None:
    db = tmp_path / "bot.sqlite3"
    async with web_stack(db) as s, httpx.AsyncClient(base_url=s.base_url, timeout=10) as client:
        sid, run = await _plan(client)
        await s.manager.wait_until_idle(ChatKey("web", sid), 10)
        unrated = _planned((await client.get(f"/api/sessions/{sid}")).json())
        assert (unrated["run"], unrated["rating"]) == (run, None)  # the reloaded plan has its buttons
        res = await client.post(f"/api/sessions/{sid}/feedback", json={"run": unrated["run"], "rating": "down"})
        assert res.status_code == 200, res.text
        rated = _planned((await client.get(f"/api/sessions/{sid}")).json())
        assert (rated["run"], rated["rating"]) == (run, "down")

    async with web_stack(db) as s, httpx.AsyncClient(base_url=s.base_url, timeout=10) as client:
        after = _planned((await client.get(f"/api/sessions/{sid}")).json())
        assert (after["run"], after["rating"]) == (run, "down")  # after a restart too
        res = await client.post(f"/api/sessions/{sid}/feedback", json={"run": after["run"], "rating": "up"})
        assert res.status_code == 200 and res.json() == {"kept": True}
        assert _planned((await client.get(f"/api/sessions/{sid}")).json())["rating"] == "up"
