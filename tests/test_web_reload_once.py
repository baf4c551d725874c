"""A reload shows each answer once, and a file link keeps its own plan's file.

A page that reloads while an answer is in the history but not yet delivered draws it from the
store (with its review, its files and its 👍 / 👎); the event stream it opens next, told what the
view drew, does not bring it again. A file link names the file it came with: after the plan is
made again (same dates, same file names), the first answer's link still gives the first plan's
calendar and cost sheet, after a reload too."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from adapters.web import WebAdapter
from agent_core.events import AnswerReady, Verdict
from agent_core.model import TokenUsage, ToolChoice
from agent_core.schema import Function, Message, Role, ToolCall
from bot.run.review import PlanValidator
from bot.surface import ChatKey, PartLog, RunInfo
from tests.team_support import TeamScript, party_plan, team_request
from tests.test_team_slack import check_exports
from tests.validator_support import Sandbox, load_sandbox
from tests.web_runtime import web_settings, web_stack
from tests.web_sse import SseReader
from tools.plan import TripPlan

LABELS = ("Ana", "Bo", "Chen")
ICS, CSV = "team-trip-2026-12-12.ics", "team-trip-2026-12-12-costs.csv"


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return load_sandbox()


class HeldAnswers(WebAdapter):
    """The web surface with a slow delivery lane: an answer is posted only once `release` is set,
    so until then it is in the history and its outbox row is not yet delivered."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def post_answer(self, chat: ChatKey, answer: AnswerReady, verdict: Verdict | None, run: RunInfo,
                          parts: PartLog) -> None:
        self.entered.set()
        await self.release.wait()
        await super().post_answer(chat, answer, verdict, run, parts)


def _stream_params(view: dict[str, Any]) -> dict[str, str]:
    """What the page opens its event stream with after a reload (adapters/web/static/app.js)."""
    params = {"after": view["last_event_id"]}
    if view.get("drawn"):
        params["drawn"] = ",".join(view["drawn"])
    return params


async def _until_help(reader: SseReader) -> None:
    """Read until the reply to /help: everything queued before it has been streamed."""
    while (await reader.until("notice", within=10)).json()["kind"] != "help":
        pass


async def test_an_answer_stored_but_not_yet_delivered_shows_once_after_a_reload(tmp_path: Path,
                                                                                 sandbox: Sandbox) -> None:
    db = tmp_path / "bot.sqlite3"
    reviewer = PlanValidator(facts=sandbox.facts(), tools=sandbox.tools, rubric_model=None)
    settings = web_settings(db, BOT_VALIDATE="on", BOT_VALIDATE_ROUNDS=0)
    async with web_stack(db, model=TeamScript(LABELS), settings=settings, reviewer=reviewer,
                         adapter=HeldAnswers) as s, httpx.AsyncClient(base_url=s.base_url, timeout=10) as client:
        web = s.web
        assert isinstance(web, HeldAnswers)
        sid = str((await client.post("/api/chat", json={"message": team_request(LABELS)})).json()["session_id"])
        chat = ChatKey("web", sid)
        async with client.stream("GET", f"/api/sessions/{sid}/events") as events:
            reader = SseReader(events)
            for _ in LABELS:
                await reader.until("human_input_request")
            for q in await s.manager.pending_questions(chat):
                ack = await client.post("/api/human_response",
                                         json={"session_id": sid, "response": "any time", "tool_call_id": q.tool_call_id})
                assert ack.status_code == 200, ack.text
            async with asyncio.timeout(20):
                await web.entered.wait()
        # the page reloads now: the plan is in the history, its outbox row not yet delivered
        view = (await client.get(f"/api/sessions/{sid}")).json()
        answers = [e for e in view["entries"] if e["role"] == "assistant"]
        assert [bool(e.get("plan")) for e in answers] == [True]
        async with client.stream("GET", f"/api/sessions/{sid}/events", params=_stream_params(view)) as res:
            reader = SseReader(res)
            web.release.set()  # now it is delivered, while the reloaded page listens
            await s.manager.wait_until_idle(chat, 10)
            assert (await client.post("/api/chat", json={"session_id": sid, "message": "/help"})).status_code == 200
            await _until_help(reader)
        streamed = [e.event for e in reader.seen]
        assert streamed.count("answer") == 0, "the reloaded page would show the answer twice"
        [planned] = answers  # drawn at once, with everything the page shows with it
        assert planned["verdict"] is not None and planned["run"] is not None
        assert sum(1 for e in answers if e.get("verdict")) + streamed.count("verdict") == 1
        urls = [f["url"] for f in planned["files"]] + [e.json()["url"] for e in reader.seen if e.event == "file"]
        assert len(urls) == len(set(urls)) == 2
        # a page that did not reload (it listened all along) gets the answer once, from the stream
        async with client.stream("GET", f"/api/sessions/{sid}/events", params={"after": view["last_event_id"]}) as res:
            reader = SseReader(res)
            await _until_help(reader)
        assert [e.event for e in reader.seen].count("answer") == 1


async def test_a_reload_at_any_moment_of_a_plans_delivery_shows_it_once(tmp_path: Path) -> None:
    async with web_stack(tmp_path / "bot.sqlite3", model=TeamScript(LABELS)) as s, \
            httpx.AsyncClient(base_url=s.base_url, timeout=10) as client:
        sid = str((await client.post("/api/chat", json={"message": team_request(LABELS)})).json()["session_id"])
        chat = ChatKey("web", sid)
        async with client.stream("GET", f"/api/sessions/{sid}/events") as events:
            reader = SseReader(events)
            for _ in LABELS:
                await reader.until("human_input_request")
        views: list[dict[str, Any]] = []
        for q in await s.manager.pending_questions(chat):
            await client.post("/api/human_response",
                              json={"session_id": sid, "response": "any time", "tool_call_id": q.tool_call_id})
        async with asyncio.timeout(20):  # reloads one after another while the plan is made and delivered
            while not views or not await s.manager.quiet(chat):
                views.append((await client.get(f"/api/sessions/{sid}")).json())
        assert (await client.post("/api/chat", json={"session_id": sid, "message": "/help"})).status_code == 200
        for view in views:
            async with client.stream("GET", f"/api/sessions/{sid}/events", params=_stream_params(view)) as res:
                reader = SseReader(res)
                await _until_help(reader)
            answers = [e for e in view["entries"] if e["role"] == "assistant"]
            assert len(answers) + [e.event for e in reader.seen].count("answer") == 1, view
            urls = [f["url"] for e in answers for f in e["files"]] + \
                [e.json()["url"] for e in reader.seen if e.event == "file"]
            assert len(urls) == len(set(urls)) == 2, view


class CheaperOnRequest(TeamScript):
    """The team plan; asked to make it cheaper, the same trip in a cheaper hotel: the same dates,
    so the same file names."""

    async def ask_tool(self, messages: Sequence[Message], *, tools: Sequence[dict[str, Any]] | None = None,
                       tool_choice: ToolChoice = "auto", usage: TokenUsage | None = None) -> Message:
        made = await super().ask_tool(messages, tools=tools, tool_choice=tool_choice, usage=usage)
        if not any(m.role is Role.USER and "cheaper" in (m.content or "") for m in messages):
            return made
        [call] = made.tool_calls or []
        arguments = {**json.loads(call.function.arguments), "plan": cheaper_plan()}
        return Message.assistant(None, [ToolCall(id=call.id, function=Function(
            name=call.function.name, arguments=json.dumps(arguments, ensure_ascii=False)))])


def cheaper_plan() -> dict[str, Any]:
    plan = copy.deepcopy(party_plan(LABELS))
    stay = plan["stays"][0]
    plan["total_cost"] -= stay["total"] - 400 * stay["nights"]
    stay.update(name="Canal Inn", hotel_id="h-hz-2", price_per_night=400, total=400 * stay["nights"])
    return plan


async def test_a_file_link_gives_its_own_plans_file_after_the_plan_is_made_again(tmp_path: Path) -> None:
    async with web_stack(tmp_path / "bot.sqlite3", model=CheaperOnRequest(LABELS)) as s, \
            httpx.AsyncClient(base_url=s.base_url, timeout=10) as client:
        sid = str((await client.post("/api/chat", json={"message": team_request(LABELS)})).json()["session_id"])
        chat = ChatKey("web", sid)
        async with client.stream("GET", f"/api/sessions/{sid}/events") as events:
            reader = SseReader(events)
            for _ in LABELS:
                await reader.until("human_input_request")
            for q in await s.manager.pending_questions(chat):
                await client.post("/api/human_response",
                                  json={"session_id": sid, "response": "any time", "tool_call_id": q.tool_call_id})
            first = {f["filename"]: f["url"] for f in [(await reader.until("file", within=10)).json() for _ in range(2)]}
            await s.manager.wait_until_idle(chat, 10)
            await client.post("/api/chat", json={"session_id": sid, "message": "make it cheaper"})
            second = {f["filename"]: f["url"] for f in [(await reader.until("file", within=10)).json() for _ in range(2)]}
        await s.manager.wait_until_idle(chat, 10)
        assert set(first) == set(second) == {ICS, CSV}  # the same names: only the links tell the plans apart
        plans = [TripPlan.model_validate(party_plan(LABELS)), TripPlan.model_validate(cheaper_plan())]
        assert plans[0].total_cost != plans[1].total_cost

        async def check(links: dict[str, str], plan: TripPlan) -> None:
            ics, sheet = await client.get(links[ICS]), await client.get(links[CSV])
            assert ics.status_code == sheet.status_code == 200, (ics.text, sheet.text)
            check_exports(ics.content, sheet.content, plan)

        await check(first, plans[0])  # the first answer's links: the first plan's files
        await check(second, plans[1])
        view = (await client.get(f"/api/sessions/{sid}")).json()  # and so after a reload
        planned = [e for e in view["entries"] if e.get("plan")]
        assert len(planned) == 2
        for entry, links, plan in zip(planned, (first, second), plans, strict=True):
            assert {f["filename"]: f["url"] for f in entry["files"]} == links
            await check(links, plan)
        stale = first[ICS].split("?")[0] + "?v=0123456789abcdef"  # a file no plan of this session made
        gone = await client.get(stale)
        assert gone.status_code == 404 and "no longer" in gone.text
