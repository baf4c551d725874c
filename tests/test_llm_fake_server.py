"""The fake OpenAI server is as strict as the real API, and its scripting works as documented."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from tests.fakes.openai_server import (
    FakeOpenAI,
    FakeScriptIncomplete,
    RecordedRequest,
    Reply,
    call,
    reply,
)

ROOT = Path(__file__).resolve().parent.parent
AUTH = {"Authorization": "Bearer sk-test"}
TOOL = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {}}}}
CALL = {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}


async def post(fake: FakeOpenAI, body: dict[str, Any], headers: dict[str, str] | None = None) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        return await client.post(f"{fake.base_url}/chat/completions", json=body,
                                 headers=AUTH if headers is None else headers)


def chat(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": list(messages), **extra}


def user(text: str = "hi") -> dict[str, Any]:
    return {"role": "user", "content": text}


@pytest.mark.parametrize(
    ("body", "param_part"),
    [
        (chat(user(), {"role": "tool", "tool_call_id": "call_x", "content": "r"}), "role"),  # orphan tool message
        (chat(user(), {"role": "assistant", "content": None, "tool_calls": [CALL]}, user("next")), "role"),
        (chat(user(), {"role": "assistant", "content": None, "tool_calls": [CALL]}), "role"),  # unanswered at the end
        (chat(user(), {"role": "assistant", "content": None, "tool_calls": [CALL]},
              {"role": "tool", "tool_call_id": "call_1", "content": "r"},
              {"role": "tool", "tool_call_id": "call_1", "content": "again"}), "role"),  # answered twice
        (chat({"role": "wizard", "content": "x"}), "role"),
        ({"messages": [user()]}, "model"),
        (chat(), "messages"),
        (chat(user(), tools=[{"type": "function", "function": {"name": "bad name!"}}]), "tools"),
        (chat(user(), tools=[{"type": "function", "function": {"name": "ok", "parameters": {"type": "array"}}}]), "tools"),
        (chat(user(), tools=[TOOL], tool_choice={"type": "function", "function": {"name": "other"}}), "tool_choice"),
        (chat(user(), tool_choice="auto"), "tool_choice"),
        (chat(user(), stream="yes"), "stream"),
        (chat(user(), stream_options={"include_usage": True}), "stream_options"),
        (chat({"role": "user", "content": [{"type": "image_url"}]}), "content"),
    ],
    ids=["orphan-tool", "unanswered-then-user", "unanswered-at-end", "answered-twice", "unknown-role",
         "no-model", "no-messages", "bad-tool-name", "bad-tool-schema", "unknown-tool-choice",
         "tool-choice-without-tools", "stream-not-bool", "stream-options-without-stream",
             "bad-content-part"],
)
async def test_invalid_requests_get_openai_shaped_400(body: dict[str, Any], param_part: str) -> None:
    async with FakeOpenAI([reply("never")]) as fake:
        resp = await post(fake, body)
        assert resp.status_code == 400
        error = resp.json()["error"]
        assert set(error) == {"message", "type", "param", "code"} and error["message"]
        assert param_part in (error["param"] or "")
        assert fake.remaining() == {"": 1}  # a rejected request consumes no turn


async def test_valid_tool_round_trip_is_accepted() -> None:
    async with FakeOpenAI([reply("fine")]) as fake:
        body = chat({"role": "system", "content": "s"}, user(),
                    {"role": "assistant", "content": None, "tool_calls": [CALL]},
                    {"role": "tool", "tool_call_id": "call_1", "content": "r"}, user("more"),
                    tools=[TOOL], tool_choice={"type": "function", "function": {"name": "lookup"}})
        resp = await post(fake, body)
        assert resp.status_code == 200, resp.text
        data = resp.json()
        assert data["object"] == "chat.completion" and data["choices"][0]["message"]["content"] == "fine"
        assert data["usage"]["total_tokens"] == data["usage"]["prompt_tokens"] + data["usage"]["completion_tokens"]


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer"}, {"Authorization": "Basic abc"}])
async def test_missing_auth_is_401(headers: dict[str, str]) -> None:
    async with FakeOpenAI([reply("never")]) as fake:
        resp = await post(fake, chat(user()), headers=headers)
        assert resp.status_code == 401 and resp.json()["error"]["code"] == "invalid_api_key"


async def test_context_limit_is_enforced() -> None:
    async with FakeOpenAI([reply("ok")], context_limit=100) as fake:
        resp = await post(fake, chat(user("x" * 1000)))
        assert resp.status_code == 400 and resp.json()["error"]["code"] == "context_length_exceeded"
        assert (await post(fake, chat(user("short")))).status_code == 200


async def test_gated_turn_is_re_served_after_client_disconnect() -> None:
    gate = asyncio.Event()
    async with FakeOpenAI([reply("the held turn", gate=gate), reply("next")]) as fake:
        client = openai.AsyncOpenAI(base_url=fake.base_url, api_key="k", max_retries=0, timeout=0.3)
        with pytest.raises(openai.APITimeoutError):
            await client.chat.completions.create(model="m", messages=[user()])
        await fake.wait_for(lambda f: f.requests[0].outcome == "disconnected")
        assert fake.remaining() == {"": 2}
        gate.set()
        got = await client.chat.completions.create(model="m", messages=[user()])
        assert got.choices[0].message.content == "the held turn"
        got = await client.chat.completions.create(model="m", messages=[user()])
        assert got.choices[0].message.content == "next"
        fake.assert_complete()
        await client.close()


_KILLABLE_CLIENT = """
import asyncio, sys, openai
async def main():
    c = openai.AsyncOpenAI(base_url=sys.argv[1], api_key="k", max_retries=0, timeout=60)
    await c.chat.completions.create(model="m", messages=[{"role": "user", "content": "[conv:k1] hi"}])
asyncio.run(main())
"""


@pytest.mark.slow
async def test_held_turn_survives_a_sigkilled_client() -> None:
    async with FakeOpenAI(scripts={"k1": [reply("after restart", gate="release")]}) as fake:
        proc = await asyncio.create_subprocess_exec(sys.executable, "-c", _KILLABLE_CLIENT, fake.base_url)
        try:
            await fake.wait_for_requests(1, within=20)
        finally:
            proc.send_signal(signal.SIGKILL)
            await proc.wait()
        await fake.wait_for(lambda f: f.requests[0].outcome == "disconnected")
        assert fake.remaining() == {"k1": 1}
        fake.gate("release").set()
        resp = await post(fake, chat(user("[conv:k1] hi")))
        assert resp.json()["choices"][0]["message"]["content"] == "after restart"
        fake.assert_complete()


async def test_assert_complete_reports_unused_turns_and_exhausted_requests() -> None:
    async with FakeOpenAI([reply("one"), reply("two")]) as fake:
        await post(fake, chat(user()))
        with pytest.raises(FakeScriptIncomplete, match="left unused"):
            fake.assert_complete()
        await post(fake, chat(user()))
        fake.assert_complete()
        resp = await post(fake, chat(user()))
        assert resp.status_code == 400 and resp.json()["error"]["type"] == "fake_script_exhausted"
        with pytest.raises(FakeScriptIncomplete):
            fake.assert_complete()


async def test_conversations_have_their_own_scripts_and_a_responder_fills_in() -> None:
    def responder(req: RecordedRequest) -> Reply:
        return reply(f"echo {req.key}: {req.messages[-1]['content']}")

    async with FakeOpenAI(scripts={"a": [reply("scripted a")]}, responder=responder) as fake:
        b, a1 = await asyncio.gather(post(fake, chat(user("[conv:b] first"))),
                                     post(fake, chat(user("[conv:a] first"))))
        a2 = await post(fake, chat(user("[conv:a] first"), {"role": "assistant", "content": "x"}, user("second")))
        texts = [r.json()["choices"][0]["message"]["content"] for r in (b, a1, a2)]
        assert texts == ["echo b: [conv:b] first", "scripted a", "echo a: second"]
        assert [r.key for r in fake.served("b")] == ["b"]


async def test_tool_call_ids_and_usage_come_from_the_script() -> None:
    async with FakeOpenAI([reply(tool_calls=[call("lookup", {"q": 1}, id="call_fixed")], usage=(11, 2))]) as fake:
        data = (await post(fake, chat(user(), tools=[TOOL]))).json()
        msg = data["choices"][0]["message"]
        assert msg["tool_calls"][0]["id"] == "call_fixed"
        assert json.loads(msg["tool_calls"][0]["function"]["arguments"]) == {"q": 1}
        assert data["choices"][0]["finish_reason"] == "tool_calls"
        assert data["usage"] == {"prompt_tokens": 11, "completion_tokens": 2, "total_tokens": 13}


@pytest.mark.slow
def test_runs_as_a_process_with_a_script_file(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"scripts": {"": [{"content": "from file", "gate": "g"},
                                                   {"kind": "fault", "status": 503}]}}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.openai_server", "--port", "0", "--script", str(script),
         "--latency-ms", "1"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        base = info["base_url"]
        with httpx.Client(timeout=10) as client:
            client.post(f"{base.removesuffix('/v1')}/_fake/gates/g")
            first = client.post(f"{base}/chat/completions", json=chat(user()), headers=AUTH)
            second = client.post(f"{base}/chat/completions", json=chat(user()), headers=AUTH)
            state = client.get(f"{base.removesuffix('/v1')}/_fake/state").json()
        assert first.json()["choices"][0]["message"]["content"] == "from file"
        assert second.status_code == 503
        assert state["remaining"] == {} and state["requests"] == 2
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
