"""A team trip on the web page: several questions wait at once and each web answer names its own;
the plan's calendar and cost sheet are announced as `file` events and downloadable."""

from __future__ import annotations

from pathlib import Path

import httpx

from bot.surface import ChatKey
from tests.team_support import TeamScript, party_plan, question_for, team_request
from tests.test_team_slack import check_exports
from tests.web_runtime import web_stack
from tests.web_sse import SseReader
from tools.plan import TripPlan

LABELS = ("Ana", "Bo", "Chen")


async def test_a_team_plan_is_downloadable_from_the_web_page(tmp_path: Path) -> None:
    model = TeamScript(LABELS)
    async with web_stack(tmp_path / "bot.sqlite3", model=model) as s, \
            httpx.AsyncClient(base_url=s.base_url, timeout=10) as client:  # type: ignore[arg-type]
        res = await client.post("/api/chat", json={"message": team_request(LABELS)})
        sid = str(res.json()["session_id"])
        async with client.stream("GET", f"/api/sessions/{sid}/events") as events:
            reader = SseReader(events)
            asked = {(await reader.until("human_input_request")).json()["question"]: None for _ in LABELS}
            assert list(asked) == [question_for(label) for label in LABELS]  # three wait at once
            session = (await client.get(f"/api/sessions/{sid}")).json()
            ids = {q.tool_call_id for q in await s.manager.pending_questions(ChatKey("web", sid))}
            assert len(ids) == 3 and session["pending"]["tool_call_id"] in ids
            for call_id in sorted(ids, reverse=True):  # answered out of order, each naming its question
                ack = await client.post("/api/human_response",
                                         json={"session_id": sid, "response": f"ok {call_id}", "tool_call_id": call_id})
                assert ack.status_code == 200, ack.text
            files = [(await reader.until("file", within=10)).json() for _ in range(2)]
        assert model.answers == {i: f"ok {i}" for i in ids}
        links = {f["filename"]: f["url"] for f in files}
        ics = await client.get(links["team-trip-2026-12-12.ics"])
        sheet = await client.get(links["team-trip-2026-12-12-costs.csv"])
        assert ics.status_code == sheet.status_code == 200
        assert ics.headers["content-type"].startswith("text/calendar")
        assert "attachment" in sheet.headers["content-disposition"]
        check_exports(ics.content, sheet.content, TripPlan.model_validate(party_plan(LABELS)))
        missing = await client.get(f"/api/sessions/{sid}/files/nothing.ics")
        assert missing.status_code == 404
