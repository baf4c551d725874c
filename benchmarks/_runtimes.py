"""The four runtimes of the side-by-side benchmark, behind one small interface.

    ours       adapters.runtime.build_runtime: SqliteStore + SessionManager + ToolCallAgent + LLM,
               durability on; a lean surface that hands the question and the answer back. Its
               model replies are not streamed (BOT_LLM_STREAM=false): none of the others streams
               here, so all four do the same work
    langgraph  langgraph.prebuilt.create_react_agent(ChatOpenAI, tools) with AsyncSqliteSaver;
               ask_human calls interrupt(), the answer resumes it with Command(resume=...)
    agents     the OpenAI Agents SDK (chat completions model) with SQLiteSession; ask_human is
               a tool that stops the run (StopAtTools), the answer is the next input
    bare       the `openai` client and a loop, conversations kept in a dict: no framework, no
               durability (the floor)

Two more beside them, for what streaming costs (bench_compare's sequential and concurrent runs):

    ours_streaming  ours as shipped: the model's replies streamed (BOT_LLM_STREAM's default), so
                    the answer's text reaches the person as it is written
    bare_streaming  the bare loop with `stream=True` (the SDK's typed chunks): the floor for it

Two more, for benchmarks/bench_pg_overhead.py (not in RUNTIMES: bench_compare stays on SQLite):

    ours_pg       the same as ours on PostgreSQL (BOT_DB_URL; leases, fencing, LISTEN)
    langgraph_pg  the same as langgraph with AsyncPostgresSaver

They read the database URL from BENCH_PG_URL.

Each driver: `await open()`, `await ask(key)` -> the question (the conversation is paused),
`await reply(key, answer)` -> the final answer, `await close()`. The tools are the same
stand-ins everywhere (same names, same outputs).
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from pathlib import Path
from typing import Any, Protocol

from _common import (
    API_KEY,
    HOTEL_RESULT,
    MODEL,
    SYSTEM_PROMPT,
    TRAIN_RESULT,
    conv_text,
)

RUNTIMES = ("ours", "langgraph", "agents", "bare")
STREAMING = ("ours_streaming", "bare_streaming")
DURABLE = {"ours": True, "langgraph": True, "agents": True, "bare": False, "ours_streaming": True,
           "bare_streaming": False}
NEEDS = {  # optional dependencies (the `bench` extra) each runtime imports
    "ours": ("openai",),
    "ours_streaming": ("openai",),
    "bare_streaming": ("openai",),
    "langgraph": ("langgraph", "langgraph.checkpoint.sqlite", "langchain_openai"),
    "agents": ("agents",),
    "bare": ("openai",),
    "ours_pg": ("openai", "asyncpg"),
    "langgraph_pg": ("langgraph", "langgraph.checkpoint.postgres", "langchain_openai", "psycopg"),
}
PG_URL_ENV = "BENCH_PG_URL"
# several "ours_pg" processes on one database (bench_pg_scale.py): a chat's question or answer
# may be posted by whichever process holds its lease; it reaches the process that asked
# through this NOTIFY channel (as the web page's events reach any process)
SHARED_EVENTS_ENV = "BENCH_SHARED_EVENTS"
SHARED_CHANNEL = "bench_events"


def missing_deps(name: str) -> list[str]:
    import importlib.util

    missing = []
    for module in NEEDS[name]:
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            missing.append(module)
    return missing


class Driver(Protocol):
    name: str
    db_path: Path | None

    async def open(self) -> None: ...
    async def ask(self, key: str) -> str: ...
    async def reply(self, key: str, answer: str) -> str: ...
    async def close(self) -> None: ...


def make_driver(name: str, base_url: str, db_path: Path) -> Driver:
    if name == "ours":
        return OursDriver(base_url, db_path)
    if name == "ours_streaming":
        return OursDriver(base_url, db_path, stream=True)
    if name == "bare_streaming":
        return BareDriver(base_url, stream=True)
    if name == "langgraph":
        return LangGraphDriver(base_url, db_path)
    if name == "agents":
        return AgentsDriver(base_url, db_path)
    if name == "bare":
        return BareDriver(base_url)
    if name == "ours_pg":
        return OursDriver(base_url, None, db_url=os.environ[PG_URL_ENV])
    if name == "langgraph_pg":
        return LangGraphDriver(base_url, None, db_url=os.environ[PG_URL_ENV])
    raise ValueError(f"unknown runtime {name!r}")


# ------------------------------------------------------------------ ours


class BenchSurface:
    """A Surface that resolves one Future per chat for the question and for the answer; keeps nothing else."""

    platform = "bench"
    signs_off = False  # one scripted person: no team plan waits for sign-off here

    def __init__(self) -> None:
        self.waiters: dict[tuple[str, str], asyncio.Future[str]] = {}
        self.questions = 0
        self.answers = 0
        self.notices: list[str] = []
        self.forward: Any = None  # async (chat_id, kind, text): to the process that asked (SHARED_EVENTS_ENV)
        self.forwarded = 0

    def expect(self, chat_id: str, kind: str) -> asyncio.Future[str]:
        fut: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.waiters[(chat_id, kind)] = fut
        return fut

    def _resolve(self, chat_id: str, kind: str, text: str) -> None:
        if (chat_id, kind) not in self.waiters and self.forward is not None:  # asked by another process
            self.forwarded += 1
            asyncio.get_running_loop().create_task(self.forward(chat_id, kind, text))
        else:
            self.heard(chat_id, kind, text)

    def heard(self, chat_id: str, kind: str, text: str) -> None:
        """Posted here, or by another process (SHARED_CHANNEL)."""
        fut = self.waiters.pop((chat_id, kind), None)
        if fut is not None and not fut.done():
            fut.set_result(text)

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def show_progress(self, chat: Any, event: Any, run: Any) -> None:
        return None

    async def post_question(self, chat: Any, question: Any, run: Any, parts: Any) -> None:
        self.questions += 1
        self._resolve(chat.chat_id, "question", question.question)
        await parts.sent(f"q{self.questions}", more=False)

    async def post_answer(self, chat: Any, answer: Any, verdict: Any, run: Any, parts: Any) -> None:
        self.answers += 1
        self._resolve(chat.chat_id, "answer", answer.text)

    async def members(self, chat: Any) -> None:
        return None

    async def post_notice(self, chat: Any, notice: Any, parts: Any) -> None:
        if notice.kind in ("error", "invalid", "refused"):
            self.notices.append(notice.text)
            for kind in ("question", "answer"):
                fut = self.waiters.pop((chat.chat_id, kind), None)
                if fut is not None and not fut.done():
                    fut.set_exception(RuntimeError(f"runtime notice: {notice.text}"))


def our_tools() -> Any:
    from pydantic import BaseModel

    from tools.ask_human import AskHuman
    from tools.base import BaseTool, ToolContext, ToolResult
    from tools.collection import ToolCollection

    class TrainParams(BaseModel):
        depart_station: str
        arrive_station: str
        depart_date: str

    class HotelParams(BaseModel):
        city_name: str
        checkin_date: str

    class TrainSearch(BaseTool[TrainParams]):
        name = "train_search"
        description = "Search trains between two stations on a date."
        params_model = TrainParams
        read_only = True  # a search, as ours are

        async def execute(self, params: TrainParams, ctx: ToolContext) -> ToolResult:
            return ToolResult(output=TRAIN_RESULT, summary="2 trains")

    class HotelSearch(BaseTool[HotelParams]):
        name = "hotel_search"
        description = "Search hotels in a city for a check-in date."
        params_model = HotelParams
        read_only = True  # a search, as ours are

        async def execute(self, params: HotelParams, ctx: ToolContext) -> ToolResult:
            return ToolResult(output=HOTEL_RESULT, summary="2 hotels")

    return ToolCollection([AskHuman(), TrainSearch(), HotelSearch()])


def _prompt(lang: str, now: Any, tz: str, location: str | None) -> str:
    return SYSTEM_PROMPT


class OursDriver:
    name = "ours"

    def __init__(self, base_url: str, db_path: Path | None, db_url: str | None = None, *, stream: bool = False) -> None:
        self.base_url = base_url
        self.db_path = db_path
        self.db_url = db_url
        self.stream = stream
        self.name = ("ours_pg" if db_url else "ours") + ("_streaming" if stream else "")
        self.surface = BenchSurface()
        self.runtime: Any = None
        self.llm: Any = None
        self._shared: tuple[Any, ...] = ()  # SHARED_EVENTS_ENV: the LISTEN connection and the NOTIFY pool

    async def open(self) -> None:
        self.build()
        await self.runtime.start()
        if self.db_url and os.environ.get(SHARED_EVENTS_ENV):
            await self._share_events()

    async def _share_events(self) -> None:
        import asyncpg

        listen = await asyncpg.connect(self.db_url)
        send = await asyncpg.create_pool(self.db_url, min_size=1, max_size=4)
        self._shared = (listen, send)
        surface = self.surface

        def heard(_conn: Any, _pid: int, _channel: str, payload: str) -> None:
            chat_id, kind, text = json.loads(payload)
            surface.heard(chat_id, kind, text)

        async def forward(chat_id: str, kind: str, text: str) -> None:
            await send.execute("SELECT pg_notify($1, $2)", SHARED_CHANNEL, json.dumps([chat_id, kind, text[:2000]]))

        await listen.add_listener(SHARED_CHANNEL, heard)
        surface.forward = forward

    def build(self) -> None:
        """build_runtime without starting it (bench_recovery times start() alone)."""
        from adapters.runtime import build_runtime
        from agent_core.llm import LLM
        from agent_core.llm_config import LLMConfig
        from bot.settings import Settings

        settings = Settings(  # type: ignore[call-arg]
            _env_file=None, db_path=self.db_path or "unused.sqlite3", db_url=self.db_url, openai_api_key=API_KEY,
            openai_base_url=self.base_url, human_timeout_s=86400, validate_plans=False, llm_model=MODEL,
            llm_stream=self.stream,
        )
        self.llm = LLM(LLMConfig(model=MODEL, api_key=API_KEY, base_url=self.base_url, timeout_s=120,
                                 stream=settings.llm_stream))
        self.runtime = build_runtime(
            settings, model=self.llm, tools=our_tools(), prompt=_prompt, serve_http=False,
            extra_surfaces=[self.surface],  # type: ignore[list-item]
        )

    async def _submit(self, key: str, text: str) -> None:
        from bot.surface import ChatKey, IncomingMessage, SubmitOutcome

        # one person per conversation: the runtime limits each person to BOT_RATE_PER_USER a minute
        msg = IncomingMessage(chat=ChatKey("bench", key), user_id=key, text=text, dedup_id=uuid.uuid4().hex)
        outcome = await self.runtime.manager.submit(msg)
        if outcome is not SubmitOutcome.ACCEPTED:
            raise RuntimeError(f"submit: {outcome}")

    async def ask(self, key: str) -> str:
        fut = self.surface.expect(key, "question")
        await self._submit(key, conv_text(key))
        return await fut

    async def wait_posted(self, key: str, timeout: float = 10.0) -> None:
        """Until the question's message id is stored (a kill before that re-posts it at restart)."""
        from bot.surface import ChatKey

        async with asyncio.timeout(timeout):
            while True:
                q = await self.runtime.manager.pending_question(ChatKey("bench", key))
                if q is not None and q.posted_message_id is not None:
                    return
                await asyncio.sleep(0.005)

    async def reply(self, key: str, answer: str) -> str:
        fut = self.surface.expect(key, "answer")
        await self._submit(key, answer)
        return await fut

    async def close(self) -> None:
        if self.runtime is not None:
            await self.runtime.stop()
        if self.llm is not None:
            await self.llm.aclose()
        for conn in self._shared:
            await conn.close()


# ------------------------------------------------------------------ LangGraph


class LangGraphDriver:
    name = "langgraph"

    def __init__(self, base_url: str, db_path: Path | None, db_url: str | None = None) -> None:
        self.name = "langgraph_pg" if db_url else "langgraph"
        self.base_url = base_url
        self.db_path = db_path
        self.db_url = db_url
        self.graph: Any = None
        self._saver_cm: Any = None

    async def open(self) -> None:
        import warnings

        from langchain_core.tools import tool
        from langchain_openai import ChatOpenAI
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
        from langgraph.types import interrupt

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from langgraph.prebuilt import create_react_agent

        @tool
        async def ask_human(inquire: str) -> str:
            """Ask the person a question; the answer comes back as this tool's result."""
            return str(interrupt(inquire))

        @tool
        async def train_search(depart_station: str, arrive_station: str, depart_date: str) -> str:
            """Search trains between two stations on a date."""
            return TRAIN_RESULT

        @tool
        async def hotel_search(city_name: str, checkin_date: str) -> str:
            """Search hotels in a city for a check-in date."""
            return HOTEL_RESULT

        if self.db_url:
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

            self._saver_cm = AsyncPostgresSaver.from_conn_string(self.db_url)
            saver = await self._saver_cm.__aenter__()
            await saver.setup()  # its tables, once
        else:
            self._saver_cm = AsyncSqliteSaver.from_conn_string(str(self.db_path))
            saver = await self._saver_cm.__aenter__()
        model = ChatOpenAI(model=MODEL, api_key=API_KEY, base_url=self.base_url, temperature=0, max_retries=0, timeout=120)  # type: ignore[arg-type]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.graph = create_react_agent(
                model, [ask_human, train_search, hotel_search], prompt=SYSTEM_PROMPT, checkpointer=saver
            )

    @staticmethod
    def _config(key: str) -> dict[str, Any]:
        return {"configurable": {"thread_id": key}}

    async def ask(self, key: str) -> str:
        out = await self.graph.ainvoke({"messages": [("user", conv_text(key))]}, self._config(key))
        interrupts = out.get("__interrupt__") or []
        if not interrupts:
            raise RuntimeError("LangGraph: the run ended without interrupt()")
        return str(interrupts[0].value)

    async def reply(self, key: str, answer: str) -> str:
        from langgraph.types import Command

        out = await self.graph.ainvoke(Command(resume=answer), self._config(key))
        return str(out["messages"][-1].content)

    async def close(self) -> None:
        if self._saver_cm is not None:
            await self._saver_cm.__aexit__(None, None, None)


# ------------------------------------------------------------------ OpenAI Agents SDK


class AgentsDriver:
    name = "agents"

    def __init__(self, base_url: str, db_path: Path) -> None:
        self.base_url = base_url
        self.db_path = db_path
        self.agent: Any = None
        self.client: Any = None

    async def open(self) -> None:
        from agents import (
            Agent,
            ModelSettings,
            OpenAIChatCompletionsModel,
            function_tool,
            set_tracing_disabled,
        )
        from agents.agent import StopAtTools
        from openai import AsyncOpenAI

        set_tracing_disabled(True)
        self.client = AsyncOpenAI(api_key=API_KEY, base_url=self.base_url, max_retries=0, timeout=120)

        @function_tool
        async def ask_human(inquire: str) -> str:
            """Ask the person a question; their answer comes as the next message."""
            return inquire

        @function_tool
        async def train_search(depart_station: str, arrive_station: str, depart_date: str) -> str:
            """Search trains between two stations on a date."""
            return TRAIN_RESULT

        @function_tool
        async def hotel_search(city_name: str, checkin_date: str) -> str:
            """Search hotels in a city for a check-in date."""
            return HOTEL_RESULT

        self.agent = Agent(
            name="planner", instructions=SYSTEM_PROMPT,
            model=OpenAIChatCompletionsModel(model=MODEL, openai_client=self.client),
            model_settings=ModelSettings(temperature=0),
            tools=[ask_human, train_search, hotel_search],
            tool_use_behavior=StopAtTools(stop_at_tool_names=["ask_human"]),
        )

    async def _run(self, key: str, text: str) -> str:
        from agents import Runner, SQLiteSession

        session = SQLiteSession(key, str(self.db_path))  # per request, as a webhook handler would
        try:
            result = await Runner.run(self.agent, text, session=session, max_turns=10)
        finally:
            session.close()
        return str(result.final_output)

    async def ask(self, key: str) -> str:
        return await self._run(key, conv_text(key))

    async def reply(self, key: str, answer: str) -> str:
        return await self._run(key, answer)

    async def close(self) -> None:
        if self.client is not None:
            await self.client.close()


# ------------------------------------------------------------------ the bare client


BARE_TOOLS = [
    {"type": "function", "function": {
        "name": "ask_human", "description": "Ask the person a question.",
        "parameters": {"type": "object", "properties": {"inquire": {"type": "string"}}, "required": ["inquire"]}}},
    {"type": "function", "function": {
        "name": "train_search", "description": "Search trains between two stations on a date.",
        "parameters": {"type": "object", "properties": {
            "depart_station": {"type": "string"}, "arrive_station": {"type": "string"}, "depart_date": {"type": "string"}},
            "required": ["depart_station", "arrive_station", "depart_date"]}}},
    {"type": "function", "function": {
        "name": "hotel_search", "description": "Search hotels in a city for a check-in date.",
        "parameters": {"type": "object", "properties": {"city_name": {"type": "string"}, "checkin_date": {"type": "string"}},
                       "required": ["city_name", "checkin_date"]}}},
]
BARE_RESULTS = {"train_search": TRAIN_RESULT, "hotel_search": HOTEL_RESULT}


class BareDriver:
    name = "bare"
    db_path: Path | None = None

    def __init__(self, base_url: str, *, stream: bool = False) -> None:
        self.base_url = base_url
        self.stream = stream
        self.name = "bare_streaming" if stream else "bare"
        self.client: Any = None
        self.paused: dict[str, tuple[list[dict[str, Any]], str]] = {}

    async def open(self) -> None:
        from openai import AsyncOpenAI

        self.client = AsyncOpenAI(api_key=API_KEY, base_url=self.base_url, max_retries=0, timeout=120)

    async def _loop(self, key: str, messages: list[dict[str, Any]]) -> tuple[str, bool]:
        while True:
            content, calls = await (self._streamed(messages) if self.stream else self._whole(messages))
            turn: dict[str, Any] = {"role": "assistant", "content": content}
            if calls:
                turn["tool_calls"] = calls
            messages.append(turn)
            if not calls:
                return content or "", False
            for tc in calls:
                fn = tc["function"]
                if fn["name"] == "ask_human":
                    self.paused[key] = (messages, tc["id"])
                    return str(json.loads(fn["arguments"])["inquire"]), True
                messages.append({"role": "tool", "tool_call_id": tc["id"], "content": BARE_RESULTS[fn["name"]]})

    async def _whole(self, messages: list[dict[str, Any]]) -> tuple[str | None, list[dict[str, Any]]]:
        res = await self.client.chat.completions.create(model=MODEL, messages=messages, tools=BARE_TOOLS, temperature=0)
        msg = res.choices[0].message
        return msg.content, [tc.model_dump() for tc in msg.tool_calls or ()]

    async def _streamed(self, messages: list[dict[str, Any]]) -> tuple[str | None, list[dict[str, Any]]]:
        """The documented way: iterate the typed chunks, join the text, assemble the tool calls."""
        stream = await self.client.chat.completions.create(model=MODEL, messages=messages, tools=BARE_TOOLS,
                                                           temperature=0, stream=True)
        text: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        async for chunk in stream:
            if not chunk.choices:
                continue
            delta = chunk.choices[0].delta
            if delta.content:
                text.append(delta.content)
            for tc in delta.tool_calls or ():
                call = calls.setdefault(tc.index, {"id": "", "type": "function", "function": {"name": "", "arguments": ""}})
                call["id"] = tc.id or call["id"]
                if tc.function is not None:
                    call["function"]["name"] += tc.function.name or ""
                    call["function"]["arguments"] += tc.function.arguments or ""
        return "".join(text) or None, [calls[i] for i in sorted(calls)]

    async def ask(self, key: str) -> str:
        messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": conv_text(key)}]
        text, paused = await self._loop(key, messages)
        if not paused:
            raise RuntimeError("bare: the run ended without a question")
        return text

    async def reply(self, key: str, answer: str) -> str:
        messages, call_id = self.paused.pop(key)
        messages.append({"role": "tool", "tool_call_id": call_id, "content": answer})
        text, _ = await self._loop(key, messages)
        return text

    async def close(self) -> None:
        if self.client is not None:
            await self.client.close()
