"""Sign-off and the web chat: with approvers configured, a team plan made on the web page is final.

The web chat cannot tell an approver from anyone else (its one user id is the session id, which
the client picks), so it never enters sign-off: the plan comes with its files and a note that
sign-off happens in Telegram and Slack, the chat is idle, and `/trip approver` sets nobody
(bot.chat.machine, the `signable` fact). Real HTTP against the real web server; only the model
is scripted.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from bot import texts
from tests.team_support import TeamScript, question_for
from tests.web_runtime import web_settings, web_stack
from tests.web_sse import SseEvent, SseReader

LABELS = ("Ana", "Bo", "Chen")
APPROVER = "U0APPROVER1"  # a Slack id; a web session may be named the same, and still is no approver
PROGRESS = ("step", "tool", "delta", "text_reset", "done")
REQUESTS = {
    "en": "offsite in Hangzhou, 12-14 December, for Ana (Beijing), Bo (Shanghai), Chen (Shenzhen)",
    "zh": "杭州团建，12月12日到14日，参加的人：Ana (Beijing)、Bo (Shanghai)、Chen (Shenzhen)",
}


async def _plan_on_the_page(client: httpx.AsyncClient, sid: str, lang: str, shown: int) -> list[SseEvent]:
    """Ask for the team trip in session `sid`, answer each traveller's question, and read the
    stream from the plan's answer on: its first `shown` events that are not progress, or fewer
    when a notice comes first (a sign-off request, on the old code)."""
    res = await client.post("/api/chat", json={"message": REQUESTS[lang], "session_id": sid, "lang": lang})
    assert res.status_code == 200, res.text
    async with client.stream("GET", f"/api/sessions/{sid}/events") as events:
        reader = SseReader(events)
        asked = [(await reader.until("human_input_request")).json() for _ in LABELS]
        assert [q["question"] for q in asked] == [question_for(label) for label in LABELS]
        for q in asked:
            ack = await client.post("/api/human_response", json={
                "session_id": sid, "response": "after 7", "tool_call_id": q["tool_call_id"]})
            assert ack.status_code == 200, ack.text
        seen = [await reader.until("answer", within=10)]
        while len(seen) < shown and seen[-1].event != "notice":
            event = await reader.next(within=10)
            if event.event not in PROGRESS:
                seen.append(event)
        return seen


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_web_team_plan_with_approvers_is_final_with_its_files_and_a_note(tmp_path: Path, lang: str) -> None:
    settings = web_settings(tmp_path / "bot.sqlite3", BOT_APPROVERS=APPROVER)
    async with web_stack(tmp_path / "bot.sqlite3", model=TeamScript(LABELS), settings=settings) as s, \
            httpx.AsyncClient(base_url=s.base_url, timeout=10) as client:  # type: ignore[arg-type]
        shown = await _plan_on_the_page(client, APPROVER, lang, 4)
        kinds = [e.event for e in shown]
        assert kinds == ["answer", "file", "file", "notice"], kinds  # the final plan: its files come with it
        note = shown[-1].json()
        assert note == {"kind": "info", "text": texts.text("signoff_elsewhere", lang), "ts": note["ts"]}
        assert ("Telegram" in note["text"]) and ("Slack" in note["text"])
        view = (await client.get(f"/api/sessions/{APPROVER}")).json()  # what a reload draws
        assert view["state"] == "idle"  # nothing waits: the next message is a new turn
        plans = [e for e in view["entries"] if e.get("plan")]
        assert [f["filename"] for f in plans[-1]["files"]] == [e.json()["filename"] for e in shown[1:3]]
        assert await s.store.signoff_for_chat(f"web:{APPROVER}:") is None
        files = [e.json()["url"] for e in shown if e.event == "file"]
        assert [(await client.get(url)).status_code for url in files] == [200, 200]


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_trip_approver_on_the_web_sets_nobody_and_the_next_team_plan_is_final(tmp_path: Path, lang: str) -> None:
    async with web_stack(tmp_path / "bot.sqlite3", model=TeamScript(LABELS)) as s, \
            httpx.AsyncClient(base_url=s.base_url, timeout=10) as client:  # type: ignore[arg-type]
        sid = "web-team-1"
        res = await client.post("/api/chat", json={"message": "/trip approver @bo", "session_id": sid, "lang": lang})
        assert res.status_code == 200, res.text
        async with client.stream("GET", f"/api/sessions/{sid}/events") as events:
            said = (await SseReader(events).until("notice")).json()
        assert (said["kind"], said["text"]) == ("info", texts.text("approver_elsewhere", lang))
        assert await s.store.channel_approvers("web", sid) == []
        shown = await _plan_on_the_page(client, sid, lang, 3)  # no approvers: the plan and its files
        assert [e.event for e in shown] == ["answer", "file", "file"]
        assert await s.store.signoff_for_chat(f"web:{sid}:") is None
        assert (await client.get(f"/api/sessions/{sid}")).json()["state"] == "idle"
