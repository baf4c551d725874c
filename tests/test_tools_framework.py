"""The tool framework: schemas, argument errors as observations, and the ask_human signal."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from tests.spine_support import Lookup
from tools.ask_human import AskHuman
from tools.base import ToolContext
from tools.collection import ToolCollection
from tools.signals import HumanInputRequired
from tools.terminate import Terminate

CTX = ToolContext(tool_call_id="call_1", now=datetime(2026, 11, 30, tzinfo=UTC))


def test_parameters_become_a_json_schema():
    param = Lookup().to_param()
    assert param["type"] == "function"
    fn = param["function"]
    assert fn["name"] == "lookup"
    assert fn["parameters"]["properties"]["city"]["type"] == "string"
    assert fn["parameters"]["required"] == ["city"]
    ask = AskHuman().to_param()["function"]["parameters"]
    assert ask["required"] == ["inquire"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("{oops", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"town": "x"}', "city: required field is missing"),
        ('{"city": 5}', "city: Input should be a valid string"),
    ],
)
async def test_bad_arguments_become_clear_observations(raw, expected):
    tools = ToolCollection([Lookup()])
    result = await tools.execute("lookup", raw, CTX)
    assert not result.ok
    assert expected in result.observation()
    assert result.observation().startswith("Error:")


async def test_unknown_tool_lists_the_available_ones():
    result = await ToolCollection([Lookup(), Terminate()]).execute("fly", "{}", CTX)
    assert "no tool named 'fly'" in (result.error or "") and "lookup, terminate" in (result.error or "")


async def test_ask_human_raises_the_pause_signal_with_the_real_call_id():
    with pytest.raises(HumanInputRequired) as info:
        await ToolCollection([AskHuman()]).execute(
            "ask_human", '{"inquire": "Which station?", "options": ["北京南", "北京西"]}', CTX
        )
    assert info.value.tool_call_id == "call_1"
    assert info.value.question == "Which station?"
    assert info.value.options == ("北京南", "北京西")


async def test_a_broad_except_exception_lets_the_pause_through():
    async def handler() -> str:
        try:
            await AskHuman()('{"inquire": "When?"}', CTX)
        except Exception:  # the kind of handler the signal must not be swallowed by
            return "swallowed"
        return "not raised"

    with pytest.raises(HumanInputRequired):
        await handler()
    assert not issubclass(HumanInputRequired, Exception)


async def test_an_empty_question_is_an_argument_error_not_a_pause():
    result = await ToolCollection([AskHuman()]).execute("ask_human", '{"inquire": "  "}', CTX)
    assert "must not be empty" in (result.error or "")


async def test_a_question_to_a_traveller_names_them_and_an_unknown_one_goes_back_to_the_model():
    team = ToolContext(tool_call_id="call_2", now=CTX.now, travellers=("<@U0ANA>", "@bo", "Chen"))
    tools = ToolCollection([AskHuman()])
    for to in ("<@U0ANA|ana>", "@Bo", "chen"):
        with pytest.raises(HumanInputRequired) as info:
            await tools.execute("ask_human", json.dumps({"inquire": "When do you leave?", "to": to}), team)
        assert info.value.to == to
    unknown = await tools.execute("ask_human", '{"inquire": "When?", "to": "@dan"}', team)
    assert unknown.error == "'@dan' is not a traveller of this trip; `to` must be one of: <@U0ANA>, @bo, Chen"


async def test_terminate_ends_the_run():
    result = await ToolCollection([Terminate()]).execute("terminate", '{"status": "success"}', CTX)
    assert result.ends_run and result.ok
