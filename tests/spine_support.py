"""Test support for the runtime: a recording surface, small test tools, and an in-process harness.

The runtime under test is the real one (adapters.runtime.build_runtime): real store, real
SessionManager, real ToolCallAgent, the real LLM client talking HTTP to the fake OpenAI server.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from adapters.runtime import Runtime, build_runtime
from agent_core.events import AnswerReady, Event, QuestionAsked, Verdict
from agent_core.llm import LLM
from agent_core.llm_config import LLMConfig
from bot.settings import Settings
from bot.surface import ChatKey, IncomingMessage, Notice, PartLog, RunInfo
from tools.ask_human import AskHuman
from tools.base import BaseTool, ToolContext, ToolResult
from tools.collection import ToolCollection
from tools.terminate import Terminate


class LookupParams(BaseModel):
    city: str = Field(description="a city name")


class Lookup(BaseTool[LookupParams]):
    """A deterministic test tool: weather of a city."""

    name = "lookup"
    description = "Look up the weather of a city."
    params_model = LookupParams

    async def execute(self, params: LookupParams, ctx: ToolContext) -> ToolResult:
        return ToolResult(output=json.dumps({"city": params.city, "weather": "sunny"}), summary=f"{params.city}: sunny")


class WaitParams(BaseModel):
    tag: str


class WaitForFile(BaseTool[WaitParams]):
    """A slow test tool: marks that it started, then waits until a release file exists."""

    name = "wait_file"
    description = "Wait for a file."
    params_model = WaitParams

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    async def execute(self, params: WaitParams, ctx: ToolContext) -> ToolResult:
        started = self.directory / f"started-{params.tag}"
        count = int(started.read_text()) if started.exists() else 0
        started.write_text(str(count + 1))
        release = self.directory / f"release-{params.tag}"
        while not release.exists():
            await asyncio.sleep(0.02)  # polls a file written by another process
        return ToolResult(output=f"waited for {params.tag}", summary="released")


def make_tools(workdir: Path | None = None) -> ToolCollection:
    tools: list[BaseTool[Any]] = [Lookup(), AskHuman(), Terminate()]
    if workdir is not None:
        tools.append(WaitForFile(workdir))
    return ToolCollection(tools)


def plain_prompt(lang: str, now: datetime, tz: str, location: str | None) -> str:
    return f"You are a test agent. Today: {now:%Y-%m-%d}. lang {lang}"


@dataclass
class Posted:
    kind: str  # progress | question | answer | notice
    chat: ChatKey
    payload: Any
    verdict: Verdict | None = None


@dataclass
class RecordingSurface:
    """A surface that records everything the runtime posts, for assertions."""

    platform: str = "test"
    signs_off: bool = False  # a team plan here is final (bot.surface.Surface)
    posted: list[Posted] = field(default_factory=list)
    runs: list[RunInfo] = field(default_factory=list)  # the run of each progress event, in order
    fail_questions: int = 0  # post_question raises this many times first
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    _next_id: int = 0

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    def _add(self, item: Posted) -> None:
        self.posted.append(item)
        self._changed.set()

    async def show_progress(self, chat: ChatKey, event: Event, run: RunInfo) -> None:
        self.runs.append(run)
        self._add(Posted("progress", chat, event))

    async def post_question(self, chat: ChatKey, question: QuestionAsked, run: RunInfo, parts: PartLog) -> None:
        if self.fail_questions > 0:
            self.fail_questions -= 1
            raise ConnectionError("surface down")
        self._next_id += 1
        self._add(Posted("question", chat, question))
        await parts.sent(f"q{self._next_id}", more=False)

    async def post_answer(
        self, chat: ChatKey, answer: AnswerReady, verdict: Verdict | None, run: RunInfo, parts: PartLog
    ) -> None:
        self._add(Posted("answer", chat, answer, verdict))

    async def members(self, chat: ChatKey) -> frozenset[str] | None:
        return None

    async def post_notice(self, chat: ChatKey, notice: Notice, parts: PartLog) -> None:
        self._add(Posted("notice", chat, notice))

    def of(self, kind: str, chat: ChatKey | None = None) -> list[Any]:
        return [p.payload for p in self.posted if p.kind == kind and (chat is None or p.chat == chat)]

    async def wait_for(self, predicate: Callable[[RecordingSurface], bool], timeout: float = 10.0) -> None:
        async with asyncio.timeout(timeout):
            while not predicate(self):
                self._changed.clear()
                await self._changed.wait()

    async def wait_count(self, kind: str, n: int, chat: ChatKey | None = None, timeout: float = 10.0) -> None:
        await self.wait_for(lambda s: len(s.of(kind, chat)) >= n, timeout)


def make_settings(tmp: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "db_path": tmp / "bot.sqlite3",
        "openai_api_key": "sk-test",
        "delivery_backoff_s": 0.05,
        "rate_per_user": 0,  # tests send bursts a person would not; the limit has its own tests
        "human_timeout_s": 3600,
        "validate_plans": False,
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def make_llm(base_url: str, **config: Any) -> LLM:
    cfg: dict[str, Any] = {
        "model": "gpt-4o-mini", "api_key": "sk-test", "base_url": base_url,
        "max_retries": 2, "backoff_base_s": 0.01, "backoff_cap_s": 0.05, "timeout_s": 5,
    }
    cfg.update(config)
    return LLM(LLMConfig(**cfg))


class TestRuntime:
    """A started Runtime and the model client it was given, which a test does not close itself:
    stop() stops the runtime, then closes the client (as bot.py's entry point does), so no
    aiohttp session is left to the collector. Everything else is the runtime's."""

    def __init__(self, runtime: Runtime, llm: LLM) -> None:
        self.runtime = runtime
        self.llm = llm

    def __getattr__(self, name: str) -> Any:
        return getattr(self.runtime, name)

    async def stop(self, timeout_s: float = 5.0) -> None:
        try:
            await self.runtime.stop(timeout_s)
        finally:
            await self.llm.aclose()


async def start_runtime(settings: Settings, llm: LLM, surface: RecordingSurface,
                        tools: ToolCollection | None = None) -> TestRuntime:
    runtime = build_runtime(
        settings, model=llm, tools=tools or make_tools(), prompt=plain_prompt, serve_http=False,
        extra_surfaces=[surface],
    )
    await runtime.start()
    return TestRuntime(runtime, llm)


def msg(chat: ChatKey, text: str, *, dedup: str = "", user: str = "u1", **extra: Any) -> IncomingMessage:
    return IncomingMessage(chat=chat, user_id=user, text=text, dedup_id=dedup, **extra)
