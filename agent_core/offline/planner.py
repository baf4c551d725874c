"""OfflinePlanner: a rule-based model behind the same interface as the LLM (ChatModel).

Each call reads the whole conversation and returns the next assistant turn: questions through
ask_human, searches through the travel tools, and finally submit_plan. Nothing is kept between
calls: what a call id is for is written into the id itself ("call_off_<n>_<purpose>"), so a run
resumed from the store after a restart continues exactly where it stopped.

A call: the conversation read back (agent_core.offline.transcript), the request state folded
from the person's words (agent_core.offline.state), one decision (agent_core.offline.decide).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from datetime import date
from typing import Any

from agent_core.model import TokenUsage, ToolChoice
from agent_core.offline.decide import Decider
from agent_core.offline.places import PlaceReader
from agent_core.offline.state import read_state
from agent_core.offline.texts import say
from agent_core.offline.transcript import CALL_ID_PREFIX, read_transcript
from agent_core.schema import Function, Message, ToolCall
from agent_core.text_tool_calls import strip_answer_tags
from tools.travel.geo import Gazetteer

STREAM_PIECES = 4  # the offline planner's text arrives in about this many pieces


class OfflinePlanner:
    name = "offline-planner"

    def __init__(self, gazetteer: Gazetteer) -> None:
        self.gazetteer = gazetteer
        self.places = PlaceReader(gazetteer)

    async def ask_tool(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: ToolChoice = "auto",
        usage: TokenUsage | None = None,
    ) -> Message:
        reply = self.next_message(messages)
        if usage is not None:
            usage.add(0, 0)  # no tokens: count the call only
        return reply

    async def stream_tool(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: ToolChoice = "auto",
        usage: TokenUsage | None = None,
    ) -> AsyncIterator[str | Message]:
        """`ask_tool`, streamed like a model would (agent_core.model.StreamingChatModel): the
        turn's visible text in a few pieces, then the turn, so the demo shows an answer being
        written."""
        reply = await self.ask_tool(messages, tools=tools, tool_choice=tool_choice, usage=usage)
        for piece in stream_pieces(strip_answer_tags(reply.content or "")):
            yield piece
            await asyncio.sleep(0)  # each piece reaches the surfaces on its own
        yield reply

    def next_message(self, messages: Sequence[Message]) -> Message:
        """The next assistant turn for `messages` (synchronous: pure CPU)."""
        t = read_transcript(messages)
        today = t.clock.today if t.clock else date.today()  # only prompts without the clock line
        state = read_state(t, self.places, today)
        turn = Decider(self, t, state, today).decide()
        text = turn.text
        if not t.intro_given:
            text = f"{say('intro', state.lang)}\n\n{text}" if text else say("intro", state.lang)
        if not turn.calls:
            return Message.assistant(f"<answer>{text}</answer>")
        calls = [
            ToolCall(id=f"{CALL_ID_PREFIX}{t.calls_so_far + i + 1}_{c.purpose}",
                     function=Function(name=c.name, arguments=json.dumps(c.arguments, ensure_ascii=False)))
            for i, c in enumerate(turn.calls)
        ]
        return Message.assistant(text, calls)


def stream_pieces(text: str, pieces: int = STREAM_PIECES) -> list[str]:
    """`text` cut into about `pieces` parts at line ends where it has them (joined, they are `text`)."""
    if not text:
        return []
    size = max(1, -(-len(text) // pieces))
    out: list[str] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        newline = text.rfind("\n", start + 1, end)
        if end < len(text) and newline > start:
            end = newline + 1
        out.append(text[start:end])
        start = end
    return out
