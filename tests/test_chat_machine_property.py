"""The chat's state machine under random interleavings (hypothesis RuleBasedStateMachine).

One runtime (real store, real SessionManager and actors, real agent and LLM client talking to
the fake OpenAI server) and two chats take messages, option presses, named answers, commands,
deadline expiries, restarts, transient and permanent delivery faults and model latency in any
order. After every step: never two runs of one chat at once. Whenever the chats are quiet:
every question answered at most once and only by a message sent after it was posted (or by
its expiry); every final answer delivered exactly once or marked failed; nothing left in an
inbox but messages held for a waiting question; every stored history valid for the API.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import shutil
import tempfile
from collections import defaultdict, deque
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from agent_core.events import AnswerReady, Event, QuestionAsked, Verdict
from agent_core.memory import Memory
from agent_core.schema import Role
from bot.delivery.retry_policy import DeliveryPolicy
from bot.observe.metrics import Metrics
from bot.run.agent_factory import TravelAgentFactory
from bot.sessions import SessionManager
from bot.settings import Settings
from bot.store import SqliteStore
from bot.surface import (
    ChatKey,
    DeliveryError,
    IncomingMessage,
    MessageKind,
    Notice,
    PartLog,
    RunInfo,
)
from tests.fakes.openai_server import FakeOpenAI, RecordedRequest, Turn, call, reply
from tests.spine_support import make_llm, make_settings, make_tools, plain_prompt

pytestmark = pytest.mark.slow  # long: handed out first under xdist (tests/conftest.py)

T = TypeVar("T")
CHATS = ("a", "b")
TIMEOUT_S = 3600.0


@dataclass
class Posted:
    seq: int
    text: str


@dataclass
class FlakySurface:
    """Records what reaches each chat; faults queued per chat make the next posts fail."""

    seq: Any
    platform: str = "prop"
    signs_off: bool = False  # a team plan here is final (bot.surface.Surface)
    questions: dict[str, Posted] = field(default_factory=dict)  # tool_call_id -> when it was posted
    answers: list[tuple[str, str]] = field(default_factory=list)  # (chat id, text)
    faults: dict[str, deque[str]] = field(default_factory=lambda: defaultdict(deque))

    def _fault(self, chat: ChatKey) -> None:
        queue = self.faults[chat.chat_id]
        if queue:
            kind = queue.popleft()
            raise DeliveryError(f"{kind} fault", permanent=kind == "permanent")

    async def show_progress(self, chat: ChatKey, event: Event, run: RunInfo) -> None:
        return None

    async def post_question(self, chat: ChatKey, question: QuestionAsked, run: RunInfo, parts: PartLog) -> None:
        self._fault(chat)
        self.questions[question.tool_call_id] = Posted(next(self.seq), question.question)
        await parts.sent(question.tool_call_id, more=False)

    async def post_answer(
        self, chat: ChatKey, answer: AnswerReady, verdict: Verdict | None, run: RunInfo, parts: PartLog
    ) -> None:
        self._fault(chat)
        self.answers.append((chat.chat_id, answer.text))

    async def members(self, chat: ChatKey) -> frozenset[str] | None:
        return None

    async def post_notice(self, chat: ChatKey, notice: Notice, parts: PartLog) -> None:
        self._fault(chat)


@dataclass
class Model:
    """A model that asks twice, then answers; it counts requests in flight per chat."""

    latency_s: float = 0.0
    in_flight: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    overlaps: list[str] = field(default_factory=list)
    ids: Any = field(default_factory=itertools.count)

    async def __call__(self, rec: RecordedRequest) -> Turn:
        key = rec.key
        self.in_flight[key] += 1
        if self.in_flight[key] > 1:
            self.overlaps.append(key)
        try:
            await asyncio.sleep(self.latency_s)
        finally:
            self.in_flight[key] -= 1
        asks = sum(1 for m in rec.messages if m.get("role") == "assistant"
                   for tc in m.get("tool_calls") or [] if tc["function"]["name"] == "ask_human")
        n = next(self.ids)
        if asks % 3 < 2:
            return reply(tool_calls=[call("ask_human", {"inquire": f"q{n}?"}, id=f"ask_{n}")])
        return reply(f"<answer>plan {n}</answer>")


class ChatMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.tmp = Path(tempfile.mkdtemp(prefix="chatprop-"))
        self.now = 1_000_000.0
        self.seq = itertools.count(1)
        self.sent: dict[str, tuple[int, str]] = {}  # message text -> (seq when sent, chat)
        self.surface = FlakySurface(self.seq)
        self.model = Model()
        self.fake = FakeOpenAI(responder=self.model)
        self.settings: Settings = make_settings(self.tmp, human_timeout_s=TIMEOUT_S)
        self.run(self.fake.start())
        self.manager: SessionManager | None = None
        self.store: SqliteStore | None = None
        self.run(self._start())
        self.texts = itertools.count()

    # -- plumbing ----------------------------------------------------------------------------
    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coro)

    async def _start(self) -> None:
        self.store = SqliteStore(self.settings.db_path)
        await self.store.open()
        factory = TravelAgentFactory(model=make_llm(self.fake.base_url), tools=make_tools(), settings=self.settings,
                                     prompt=plain_prompt)
        self.manager = SessionManager(self.store, factory, self.settings, Metrics(), clock=lambda: self.now,
                                      delivery=DeliveryPolicy(first_delay_s=0.005, max_delay_s=0.02))
        self.manager.attach(self.surface)  # type: ignore[arg-type]
        await self.manager.start()

    async def _stop(self) -> None:
        assert self.manager is not None and self.store is not None
        await self.manager.stop()
        await self.store.close()

    def teardown(self) -> None:
        try:
            self.run(self._stop())
            self.run(self.fake.close())
        finally:
            self.loop.close()
            shutil.rmtree(self.tmp, ignore_errors=True)

    def _submit(self, chat: str, text: str, **extra: Any) -> None:
        assert self.manager is not None
        message = IncomingMessage(ChatKey("prop", chat), "u1", f"[conv:{chat}] {text}", dedup_id=text, **extra)
        self.run(self.manager.submit(message))
        self.sent[text] = (next(self.seq), chat)  # once stored: what the store calls its arrival

    def _let_it_run(self, seconds: float) -> None:
        self.run(asyncio.sleep(seconds))

    # -- rules -------------------------------------------------------------------------------
    @rule(chat=st.sampled_from(CHATS))
    def message(self, chat: str) -> None:
        self._submit(chat, f"m{next(self.texts)}")

    @rule(chat=st.sampled_from(CHATS), stale=st.booleans())
    def named_answer(self, chat: str, stale: bool) -> None:
        assert self.store is not None
        q = self.run(self.store.question_for_chat(f"prop:{chat}:"))
        name = "ask_gone" if stale or q is None else q.tool_call_id
        self._submit(chat, f"m{next(self.texts)}", kind=MessageKind.BUTTON, question_id=name)

    @rule(chat=st.sampled_from(CHATS), command=st.sampled_from(["/cancel", "/new", "/status"]))
    def command(self, chat: str, command: str) -> None:
        assert self.manager is not None
        message = IncomingMessage(ChatKey("prop", chat), "u1", command, dedup_id=f"cmd{next(self.texts)}")
        self.run(self.manager.submit(message))

    @rule()
    def deadlines_pass(self) -> None:
        assert self.manager is not None
        self.now += TIMEOUT_S + 1
        self.run(self.manager.deadlines.check_now())

    @rule()
    def restart(self) -> None:
        self.run(self._stop())
        self.run(self._start())

    @rule(chat=st.sampled_from(CHATS), kind=st.sampled_from(["transient", "permanent"]), n=st.integers(1, 4))
    def delivery_faults(self, chat: str, kind: str, n: int) -> None:
        self.surface.faults[chat].extend([kind] * n)

    @rule(ms=st.sampled_from([0, 5, 30]))
    def model_latency(self, ms: int) -> None:
        self.model.latency_s = ms / 1000

    @rule(seconds=st.sampled_from([0.0, 0.01, 0.05]))
    def time_passes(self, seconds: float) -> None:
        self._let_it_run(seconds)

    @rule()
    def settle(self) -> None:
        assert self.manager is not None
        for chat in CHATS:
            self.run(self.manager.wait_until_idle(ChatKey("prop", chat), 5))
        self.run(self._quiet_invariants())

    # -- invariants --------------------------------------------------------------------------
    @invariant()
    def one_run_per_chat(self) -> None:
        assert not self.model.overlaps, f"two runs of one chat asked the model at once: {self.model.overlaps}"

    async def _quiet_invariants(self) -> None:
        assert self.store is not None
        conn_rows = await self.store._rows(  # a read of the test's own database
            "SELECT s.id, s.chat_key, s.state, s.closed FROM sessions s"
        )
        for session_id, chat_key, state, closed in conn_rows:
            messages = await self.store.load_messages(session_id)
            open_calls = Memory(messages).unanswered_calls()
            waiting = await self.store.get_question(session_id)
            if state == "asking" and not closed:
                assert waiting is not None and [c.id for c in open_calls] == [waiting.tool_call_id]
            else:
                assert not open_calls, f"{chat_key}: calls left unanswered in state {state}"
            results = [m for m in messages if m.role is Role.TOOL and (m.name == "ask_human")]
            ids = [m.tool_call_id for m in results]
            assert len(ids) == len(set(ids)), "a question was answered twice"
            for m in results:
                self._answered_after_posting(m.tool_call_id or "", m.content or "")
            if not closed:  # the chat's open conversation: only messages held for its question wait
                pending = await self.store.inbox_for(chat_key)
                if pending:
                    assert state == "asking" and all(r.kind == "message" for r in pending), pending
        for chat in CHATS:
            if await self.store.get_session(f"prop:{chat}:") is None:
                assert not await self.store.inbox_for(f"prop:{chat}:"), f"{chat}: rows left with no conversation"
        await self._answers_once()

    def _answered_after_posting(self, tool_call_id: str, content: str) -> None:
        text = content.split("] ", 1)[-1]
        if text not in self.sent:
            return  # expired, cancelled or undeliverable: the runtime's own result
        sent_at, _chat = self.sent[text]
        posted = self.surface.questions.get(tool_call_id)
        assert posted is not None, f"{tool_call_id} answered by {text!r} but never posted"
        assert sent_at > posted.seq, f"{text!r} was sent before {tool_call_id} was posted"

    async def _answers_once(self) -> None:
        assert self.store is not None
        rows = await self.store._rows("SELECT chat_key, body, status FROM outbox WHERE kind = 'answer'")
        delivered = [a for a in self.surface.answers]
        assert len(delivered) == len(set(delivered)), "an answer was delivered twice"
        for chat_key, body, status in rows:
            text = json.loads(body)["text"]
            chat_id = chat_key.split(":")[1]
            count = delivered.count((chat_id, text))
            assert status in ("sent", "failed"), f"answer {text!r} still {status} in a quiet chat"
            assert count == (1 if status == "sent" else 0), (text, status, count)


# max_examples comes from the Hypothesis profile (tests/conftest.py): 20 while developing, 100 in CI
ChatMachine.TestCase.settings = settings(
    stateful_step_count=30, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
test_chat_machine = ChatMachine.TestCase
