"""The memory bound never separates a tool result from the assistant turn that called it."""

from __future__ import annotations

from agent_core.memory import Memory
from agent_core.schema import Function, Message, Role, ToolCall


def turn(i: int, calls: int = 2) -> list[Message]:
    tcs = [ToolCall(id=f"c{i}_{j}", function=Function(name="lookup", arguments="{}")) for j in range(calls)]
    out = [Message.user(f"u{i}"), Message.assistant(None, tcs)]
    out += [Message.tool("r", tool_call_id=tc.id, name="lookup") for tc in reversed(tcs)]  # out of order
    out.append(Message.assistant(f"a{i}"))
    return out


def assert_valid(window: list[Message]) -> None:
    open_calls: set[str] = set()
    for msg in window:
        if msg.role is Role.TOOL:
            assert msg.tool_call_id in open_calls, "a tool message without its call"
            open_calls.discard(msg.tool_call_id)
        else:
            assert not open_calls or msg.role is Role.TOOL, "a call left unanswered"
            if msg.role is Role.ASSISTANT and msg.tool_calls:
                open_calls = {tc.id for tc in msg.tool_calls}


def test_every_cut_keeps_calls_and_results_together():
    messages = [m for i in range(20) for m in turn(i)]
    for bound in range(4, 60):
        window = Memory(messages, max_messages=bound).window()
        assert window and window[0].role is Role.USER
        assert_valid(window)
        assert len(window) <= max(bound, 5)


def test_results_are_ordered_like_the_calls():
    window = Memory(turn(1, calls=3)).window()
    tool_ids = [m.tool_call_id for m in window if m.role is Role.TOOL]
    assert tool_ids == ["c1_0", "c1_1", "c1_2"]


def test_open_calls_are_reported_and_interrupted_turns_are_filled():
    tcs = [ToolCall(id="x1", function=Function(name="ask_human", arguments="{}"))]
    mem = Memory([Message.user("q"), Message.assistant(None, tcs)])
    assert [tc.id for tc in mem.unanswered_calls()] == ["x1"]
    mem.add(Message.user("never mind"))
    assert mem.unanswered_calls() == []
    window = mem.window()
    assert_valid(window)
    assert window[2].role is Role.TOOL and "interrupted" in (window[2].content or "")


def test_messages_round_trip_as_json():
    for msg in turn(3):
        assert Message.from_json(msg.to_json()) == msg
