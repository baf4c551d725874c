"""Thumbs up / down under a plan in the web chat: the answer event names the plan's run, and
`POST /api/sessions/{id}/feedback` keeps the rating with it (the latest press counts); a run the
session does not have, another session's, or a bad body are refused and keep nothing."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.scripted_trip import DAYS
from tests.web_runtime import web_stack
from tests.web_sse import SseReader


async def _planned(client: httpx.AsyncClient) -> tuple[str, str]:
    """A session with a plan: its id and the run the plan's answer event names."""
    sid = str((await client.post("/api/chat", json={"message": "Beijing to Shanghai, please"})).json()["session_id"])
    async with client.stream("GET", f"/api/sessions/{sid}/events") as res:
        reader = SseReader(res)
        await reader.until("human_input_request")
        await client.post("/api/human_response", json={"session_id": sid, "response": DAYS[0], "option": True})
        answer = (await reader.until("answer")).json()
    assert answer["plan"] is not None
    return sid, str(answer["run"])


async def test_a_plan_is_rated_with_its_run_and_only_its_own_sessions_runs(tmp_path: Path) -> None:
    async with web_stack(tmp_path / "bot.sqlite3") as stack, \
            httpx.AsyncClient(base_url=stack.base_url, timeout=10) as client:
        sid, run = await _planned(client)
        assert run.endswith(".1")
        for rating in ("up", "down"):
            res = await client.post(f"/api/sessions/{sid}/feedback", json={"run": run, "rating": rating})
            assert res.status_code == 200 and res.json() == {"kept": True}
        [kept] = await stack.store.recent_feedback()
        assert (kept.chat_key, kept.user_id, kept.rating, kept.run_no) == (f"web:{sid}:", sid, "down", 1)

        other, other_run = await _planned(client)
        refused = [
            await client.post(f"/api/sessions/{sid}/feedback", json={"run": other_run, "rating": "up"}),  # another's
            await client.post(f"/api/sessions/{sid}/feedback", json={"run": run[:-1] + "9", "rating": "up"}),
        ]
        assert [r.status_code for r in refused] == [404, 404]
        bad = [
            await client.post(f"/api/sessions/{sid}/feedback", json={"run": run, "rating": "sideways"}),
            await client.post(f"/api/sessions/{sid}/feedback", json={"run": "not a run", "rating": "up"}),
            await client.post(f"/api/sessions/{sid}/feedback", json={"run": run, "rating": "up", "extra": 1}),
        ]
        assert [r.status_code for r in bad] == [422, 422, 422]
        assert len(await stack.store.recent_feedback()) == 1
        assert other != sid
        metrics = (await client.get("/metrics")).text
        assert 'bot_plan_feedback_total{platform="web",rating="refused"} 2.0' in metrics
