"""A run whose first answer is revised before it is taken: the model searches, writes a plan as
text (streamed), is asked once more to call submit_plan (agent_core.travel_agent's follow-up),
and writes its final text (streamed again). Every surface's test of "one answer growing in one
place" drives this script."""

from __future__ import annotations

from typing import Any

from tests.fakes.openai_server import Reply, call, reply
from tests.spine_support import Lookup
from tools.ask_human import AskHuman
from tools.collection import ToolCollection
from tools.submit_plan import SubmitPlan
from tools.terminate import Terminate

DRAFT = ("Day 1: take G7648 from Hangzhou East 08:10 to Beijing South 13:05 (590.5 yuan), "
         "then stay at Grand Lotus Hotel (¥800/night).")
FINAL = ("Revised: G7648 leaves Hangzhou East at 08:10 and reaches Beijing South at 13:05 (590.5 yuan); "
         "two nights at Grand Lotus Hotel (¥800/night).")


def revised_script(pause_ms: float = 0, **streaming: Any) -> list[Reply]:
    """`pause_ms`: how long the model takes before it starts writing the revision (the withdrawn
    draft's place stays empty meanwhile)."""
    pace = {"chunk_chars": 6, "chunk_gap_ms": 10, **streaming}
    return [reply(tool_calls=[call("lookup", {"city": "Hangzhou"}, id="call_l1")]),
            reply(DRAFT, **pace),  # a plan as text only: the agent asks for submit_plan
            reply(FINAL, latency_ms=pause_ms or None, **pace)]  # text again: taken at its word


def revising_tools() -> ToolCollection:
    """The test tools with submit_plan, so the agent asks for it once."""
    return ToolCollection([Lookup(), AskHuman(), SubmitPlan(), Terminate()])


def after_last_reset(pieces: list[tuple[str, str]]) -> str:
    """("delta", text) and ("text_reset", "") in order: the text the deltas after the last reset make."""
    out: list[str] = []
    for kind, text in pieces:
        if kind == "text_reset":
            out = []
        elif kind == "delta":
            out.append(text)
    return "".join(out)
