"""The real runtime with the Slack surface, against the fake Slack Web API, for tests and the benchmark.

Only the model is scripted (ScriptedTrip: ask the day with options, then submit a plan for the
day answered); the store, the SessionManager, the Slack adapter, Bolt, the SDK and the HTTP
server are the real ones, talking real HTTP on 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapters.runtime import Runtime, build_runtime
from adapters.slack import SlackAdapter
from agent_core.llm import LLM
from agent_core.model import ChatModel
from bot.settings import Settings
from tests.fakes.slack_api import FakeSlack, SlackMessage
from tests.fakes.slack_events import SlackEvents
from tests.scripted_trip import ScriptedTrip
from tools.ask_human import AskHuman
from tools.collection import ToolCollection
from tools.submit_plan import SubmitPlan
from tools.terminate import Terminate

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
def slack_model(**fields: Any) -> ScriptedTrip:
    """The scripted trip as the Slack tests drive it (its summary has Markdown bold for mrkdwn)."""
    summary = "Here is your trip on {day}: **G1** to Shanghai, one night at the Bund Riverside Hotel."
    return ScriptedTrip(name="scripted-slack-trip", summary=summary, **fields)


def slack_settings(db_path: Path, fake: FakeSlack, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "BOT_DB_PATH": str(db_path), "BOT_HOST": "127.0.0.1", "BOT_PORT": 0, "BOT_VALIDATE": "off",
        "SLACK_BOT_TOKEN": fake.bot_token, "SLACK_SIGNING_SECRET": SECRET, "SLACK_API_BASE_URL": fake.base_url,
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def tools() -> ToolCollection:
    return ToolCollection([AskHuman(), SubmitPlan(), Terminate()])


def prompt(lang: str, now: Any, tz: str, loc: str | None) -> str:
    return f"You plan trips. Now: {now:%Y-%m-%d %H:%M} {tz}."


@dataclass
class SlackStack:
    fake: FakeSlack
    runtime: Runtime
    events: SlackEvents
    model: ScriptedTrip

    @property
    def adapter(self) -> SlackAdapter:
        return next(a for a in self.runtime.adapters if isinstance(a, SlackAdapter))

    def mention(self, channel: str = "C1", user: str = "U1", text: str = "plan a trip to Shanghai",
                thread_ts: str | None = None) -> SlackMessage:
        return self.fake.user_message(channel, user, f"<@{self.fake.bot_user_id}> {text}", thread_ts)

    async def wait_posts(self, channel: str, thread_ts: str, count: int, within: float = 10.0) -> list[SlackMessage]:
        await self.fake.wait_for(lambda f: len(f.bot_posts(channel, thread_ts)) >= count, within)
        return self.fake.bot_posts(channel, thread_ts)

    async def wait_question(self, channel: str, thread_ts: str, within: float = 10.0) -> SlackMessage:
        def asked(f: FakeSlack) -> bool:
            return any(m.button_values() for m in f.bot_posts(channel, thread_ts))
        await self.fake.wait_for(asked, within)
        return next(m for m in self.fake.bot_posts(channel, thread_ts) if m.button_values())

    async def wait_plan(self, channel: str, thread_ts: str, within: float = 10.0) -> SlackMessage:
        def planned(f: FakeSlack) -> bool:
            return any(is_plan(m) for m in f.bot_posts(channel, thread_ts))
        await self.fake.wait_for(planned, within)
        return next(m for m in self.fake.bot_posts(channel, thread_ts) if is_plan(m))


def is_plan(m: SlackMessage) -> bool:
    return any(b.get("type") == "header" for b in m.blocks)


@asynccontextmanager
async def slack_stack(tmp_path: Path, *, model: ScriptedTrip | None = None, fake: FakeSlack | None = None,
                      chat_model: ChatModel | None = None, tool_set: ToolCollection | None = None,
                      **overrides: Any) -> AsyncIterator[SlackStack]:
    """`chat_model` (a streaming LLM client, say) replaces the scripted model when given;
    `tool_set` the tools."""
    own_fake = fake is None
    fake = fake or FakeSlack(channels={"C1": "channel", "C2": "channel", "D1": "im"})
    if own_fake:
        await fake.start()
    model = model or slack_model()
    settings = slack_settings(tmp_path / "bot.sqlite3", fake, **overrides)
    runtime = build_runtime(settings, model=chat_model or model, tools=tool_set or tools(), prompt=prompt)
    await runtime.start()
    assert runtime.server is not None
    events = SlackEvents(url=f"{runtime.server.base_url}/slack/events", signing_secret=SECRET,
                         bot_user_id=fake.bot_user_id)
    try:
        yield SlackStack(fake, runtime, events, model)
    finally:
        await events.aclose()
        await runtime.stop()
        if isinstance(chat_model, LLM):  # the stack runs the client it was given until it stops
            await chat_model.aclose()
        if own_fake:
            await fake.close()
