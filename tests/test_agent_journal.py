"""What the agent hands its journal, and when: the commits a step costs.

The journal here keeps the RunJournal contract the way the SQLite one does (deferred messages
ride with the next write) and lists each write as one commit, so the tests read the commits a
conversation would cost. The model is the real LLM client against the fake OpenAI server.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from agent_core.agents.toolcall import ToolCallAgent
from agent_core.events import QuestionAsked
from agent_core.journal import PendingAsk
from agent_core.memory import Memory
from agent_core.schema import Message, Role
from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.spine_support import Lookup, make_llm, make_tools
from tools.base import ToolContext
from tools.collection import ToolCollection


@dataclass
class Commit:
    roles: list[str]
    question: str | None = None
    waited: bool = True  # did the agent wait for it before going on?


@dataclass
class CommitLog:
    commits: list[Commit] = field(default_factory=list)
    deferred: list[Message] = field(default_factory=list)

    def incoming(self) -> Sequence[Message]:
        return ()

    async def record(
        self, messages: Sequence[Message], *, step: int, defer: bool = False, wait: bool = True
    ) -> None:
        if defer:
            self.deferred.extend(messages)
            return
        self._commit([*self.deferred, *messages], None, wait)

    async def settle(self) -> None:
        return None

    async def pause(self, messages: Sequence[Message], ask: PendingAsk, *, step: int) -> None:
        self._commit([*self.deferred, *messages], ask.question, True)

    def _commit(self, messages: list[Message], question: str | None, waited: bool) -> None:
        self.deferred = []
        self.commits.append(Commit([_role(m) for m in messages], question, waited))


def _role(m: Message) -> str:
    if m.role is Role.ASSISTANT and m.tool_calls:
        return "calls:" + ",".join(tc.function.name for tc in m.tool_calls)
    return m.role.value


class Forecast(Lookup):
    """Lookup that declares it only reads: running it twice changes nothing."""

    name = "forecast"
    read_only = True


def agent_for(base_url: str) -> ToolCallAgent:
    return ToolCallAgent(
        model=make_llm(base_url), tools=ToolCollection([*make_tools(), Forecast()]), system_prompt="test",
        context=ToolContext(tool_call_id="", now=datetime(2026, 5, 1, tzinfo=UTC), lang="en"),
        memory=Memory([Message.user("Plan a trip")]),
    )


async def test_a_reply_that_only_asks_is_stored_with_its_question_in_one_commit() -> None:
    async with FakeOpenAI([reply(tool_calls=[call("ask_human", {"inquire": "Which day?"}, id="c1")])]) as fake:
        journal = CommitLog()
        events = [e async for e in agent_for(fake.base_url).run(journal)]
        assert isinstance(events[-1], QuestionAsked) and events[-1].tool_call_id == "c1"
        assert journal.commits == [Commit(["calls:ask_human"], "Which day?")]
        fake.assert_complete()


async def test_a_reply_whose_tools_act_is_committed_before_they_run() -> None:
    script = [
        reply(tool_calls=[call("lookup", {"city": "Shanghai"}, id="c1")]),
        reply(tool_calls=[call("ask_human", {"inquire": "Which day?"}, id="c2")]),
    ]
    async with FakeOpenAI(script) as fake:
        journal = CommitLog()
        [e async for e in agent_for(fake.base_url).run(journal)]
        assert journal.commits == [
            Commit(["calls:lookup"]),  # before lookup ran: a crash never asks the model again for it
            Commit(["tool", "calls:ask_human"], "Which day?"),  # lookup's result rides with the pause
        ]
        fake.assert_complete()


async def test_a_reply_whose_tools_only_read_is_committed_while_they_run() -> None:
    script = [
        reply(tool_calls=[call("forecast", {"city": "Shanghai"}, id="c1")]),
        reply(tool_calls=[call("forecast", {"city": "Hangzhou"}, id="c2"), call("lookup", {"city": "Suzhou"}, id="c3")]),
        reply(tool_calls=[call("ask_human", {"inquire": "Which day?"}, id="c4")]),
    ]
    async with FakeOpenAI(script) as fake:
        journal = CommitLog()
        [e async for e in agent_for(fake.base_url).run(journal)]
        assert journal.commits == [
            Commit(["calls:forecast"], waited=False),  # a crash re-asks the model; forecast only reads
            Commit(["tool", "calls:forecast,lookup"]),  # lookup may act: on disk before it runs
            Commit(["tool", "tool", "calls:ask_human"], "Which day?"),
        ]
        fake.assert_complete()


async def test_the_final_text_rides_with_the_end_of_the_run() -> None:
    script = [
        reply(tool_calls=[call("lookup", {"city": "Shanghai"}, id="c1")]),
        reply("Take the 9:00 train."),
    ]
    async with FakeOpenAI(script) as fake:
        journal = CommitLog()
        [e async for e in agent_for(fake.base_url).run(journal)]
        # the answer has no effect until the run's end is stored (with its outbox row)
        assert journal.commits == [Commit(["calls:lookup"])]
        assert [_role(m) for m in journal.deferred] == ["tool", "assistant"]
        fake.assert_complete()
