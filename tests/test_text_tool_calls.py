"""Recovering tool calls written as text; think stripping; the <answer> helper."""

from __future__ import annotations

import pytest

from agent_core.text_tool_calls import answer_text, recover_tool_calls, strip_think

KNOWN = {"flight_search", "ask_human", "terminate", "train_search"}


def names_and_args(text: str) -> list[tuple[str, dict[str, object]]]:
    return [(c.function.name, c.parsed_arguments()) for c in recover_tool_calls(text, KNOWN).calls]


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"name": "ask_human", "arguments": {"inquire": "哪天出发?"}}\n```',
        '```json\n{"tool": "ask_human", "parameters": {"inquire": "哪天出发?"}}\n```',
        '```\n{"function": "ask_human", "args": {"inquire": "哪天出发?"}}\n```',
        '```json\n{"type": "function", "function": {"name": "ask_human", "arguments": "{\\"inquire\\": \\"哪天出发?\\"}"}}\n```',
        '```json\n{"tool_calls": [{"name": "ask_human", "arguments": {"inquire": "哪天出发?"}}]}\n```',
        '<tool_call>{"name": "ask_human", "arguments": {"inquire": "哪天出发?"}}</tool_call>',
        '<tool_call>\n```json\n{"name": "ask_human", "arguments": {"inquire": "哪天出发?"}}\n```\n</tool_call>',
        '<tool_call>ask_human(inquire="哪天出发?")</tool_call>',
        "<TOOL_BEGIN><tool_call>ask_human(inquire='哪天出发?')</tool_call><TOOL_END>",
        '{"name": "ask_human", "arguments": {"inquire": "哪天出发?"}}',
    ],
)
def test_formats(text: str) -> None:
    assert names_and_args(text) == [("ask_human", {"inquire": "哪天出发?"})]
    assert recover_tool_calls(text, KNOWN).content == ""


def test_several_calls_in_a_tool_begin_block_with_literals() -> None:
    text = (
        "我来核实一下。\n<TOOL_BEGIN>\n"
        '<tool_call>flight_search(departure_city_name="上海市", arrival_city_name="北京市", '
        'depart_date="2025-05-01", is_transfer=0, max_sale_price=-1.5, extra=[1, true, null])</tool_call>\n'
        '<tool_call>train_search(depart_station="上海", arrive_station="北京", depart_date="2025-05-01", '
        "is_transfer=False, opts={'seat': '二等座'})</tool_call>\n<TOOL_END>\n"
    )
    rec = recover_tool_calls(text, KNOWN)
    assert rec.content == "我来核实一下。"
    assert [c.function.name for c in rec.calls] == ["flight_search", "train_search"]
    assert rec.calls[0].parsed_arguments()["is_transfer"] == 0
    assert rec.calls[0].parsed_arguments()["max_sale_price"] == -1.5
    assert rec.calls[0].parsed_arguments()["extra"] == [1, True, None]
    assert rec.calls[1].parsed_arguments()["opts"] == {"seat": "二等座"}
    assert len({c.id for c in rec.calls}) == 2 and all(c.id.startswith("call_") for c in rec.calls)


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>__import__("os").system("rm -rf /")</tool_call>',
        "<tool_call>terminate(status=open('/etc/passwd').read())</tool_call>",
        "<tool_call>terminate(**{'status': 'x'})</tool_call>",
        "<tool_call>terminate('positional')</tool_call>",
        "<tool_call>terminate(status=1+1)</tool_call>",
        '<tool_call>delete_everything(now=true)</tool_call>',
        '```json\n{"name": "unknown_tool", "arguments": {}}\n```',
        '```python\n{"name": "terminate", "arguments": {}}\n```',
        '```json\n{"name": "terminate", "arguments": [1, 2]}\n```',
        '```json\n{"name": "terminate", "arguments": {broken json\n```',
        "Just a plan: fly on Monday.",
    ],
)
def test_unsafe_unknown_or_malformed_calls_stay_text(text: str) -> None:
    rec = recover_tool_calls(text, KNOWN)
    assert rec.calls == [] and rec.content == text


def test_a_block_mixing_known_and_unknown_tools_is_left_alone() -> None:
    text = '```json\n[{"name": "terminate", "arguments": {}}, {"name": "nope", "arguments": {}}]\n```'
    assert recover_tool_calls(text, KNOWN).calls == []


def test_other_code_blocks_survive_recovery() -> None:
    text = ('Here:\n```json\n{"budget": 3000}\n```\nand\n'
            '```json\n{"name": "terminate", "arguments": {"status": "success"}}\n```')
    rec = recover_tool_calls(text, KNOWN)
    assert [c.function.name for c in rec.calls] == ["terminate"]
    assert '{"budget": 3000}' in rec.content and "terminate" not in rec.content


def test_nothing_is_recovered_without_known_tools() -> None:
    text = '<tool_call>terminate(status="x")</tool_call>'
    assert recover_tool_calls(text, set()).calls == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<think>plan the route</think>Take the 8:00 train.", "Take the 8:00 train."),
        ("<THINK>a</THINK>x<think>b\nc</think>y", "xy"),
        ("I should check trains first...\n</think>\n\nTake the 8:00 train.", "Take the 8:00 train."),
        ("Answer first. <think>then trailing thoughts cut off by max_tokens", "Answer first."),
        ("No thinking here.", "No thinking here."),
        ("", ""),
        (None, ""),
    ],
)
def test_strip_think(text: str | None, expected: str) -> None:
    assert strip_think(text) == expected


def test_answer_text() -> None:
    assert answer_text("blah <answer>\nDay 1: 外滩\n</answer> trailing") == "Day 1: 外滩"
    assert answer_text("<answer>cut off") == "cut off"
    assert answer_text("no tags") is None
    assert answer_text(None) is None
