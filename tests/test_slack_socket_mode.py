"""Slack over Socket Mode (SLACK_APP_TOKEN, no signing secret): the real Bolt socket-mode handler
and slack-sdk client connect to the fake's WebSocket, acknowledge envelopes, and the same thread
flow as over HTTP follows; a redelivery is handled once; Slack's refresh is survived."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx

from adapters.slack.mrkdwn import unescape
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_socket import SlackSocketMode
from tests.scripted_trip import DAYS, QUESTION_EN
from tests.slack_support import SlackStack, slack_stack


@asynccontextmanager
async def socket_stack(tmp_path: Path) -> AsyncIterator[tuple[SlackStack, SlackSocketMode]]:
    async with FakeSlack(channels={"C1": "channel", "D1": "im"}) as fake:
        socket = await SlackSocketMode(fake).start()
        try:
            async with slack_stack(tmp_path, fake=fake, SLACK_SIGNING_SECRET=None, SLACK_APP_TOKEN=fake.app_token) as s:
                await socket.wait_connected()
                yield s, socket
        finally:
            await socket.close()


async def test_a_mention_over_the_socket_is_acked_asked_answered_and_planned(tmp_path: Path) -> None:
    async with socket_stack(tmp_path) as (s, socket):
        assert s.runtime.server is not None
        assert s.fake.calls_of("apps.connections.open")  # with the app-level token: the fake refuses any other
        msg = s.mention(text="plan a trip from Beijing to Shanghai")
        ack = await socket.app_mention(msg)
        assert ack.seconds < 1.0 and ack.payload is None

        question = await s.wait_question("C1", msg.ts)
        assert question.thread_ts == msg.ts and QUESTION_EN in unescape(question.text)
        assert question.button_values() == list(DAYS)

        reply = s.fake.user_message("C1", "U1", f"let's go on {DAYS[1]}", thread_ts=msg.ts)
        await socket.message(reply)
        plan = await s.wait_plan("C1", msg.ts)
        assert plan.thread_ts == msg.ts and f"trip on {DAYS[1]}" in plan.text
        assert s.model.calls == 2
        assert socket.stray_acks == []
        assert all(c.status == 200 for c in s.fake.calls)  # no call used the wrong token type


async def test_a_redelivered_envelope_is_acked_and_handled_once(tmp_path: Path) -> None:
    async with socket_stack(tmp_path) as (s, socket):
        msg = s.mention(text="plan a trip from Beijing to Shanghai")
        event_id = "EvSOCKET0001"
        await socket.app_mention(msg, event_id=event_id)
        await socket.app_mention(msg, event_id=event_id, retry_attempt=1)  # Slack thought the first was lost
        await socket.message(msg)  # the same mention as a `message` event too
        await s.wait_question("C1", msg.ts)
        await s.adapter.wait_inbound(lambda c: c["accepted"] == 1 and c["duplicate"] == 2, within=5)
        questions = [m for m in s.fake.bot_posts("C1", msg.ts) if m.button_values()]
        assert len(questions) == 1 and s.model.calls == 1


async def test_a_refresh_reconnects_and_the_conversation_goes_on(tmp_path: Path) -> None:
    async with socket_stack(tmp_path) as (s, socket):
        msg = s.mention(text="plan a trip from Beijing to Shanghai")
        await socket.app_mention(msg)
        await s.wait_question("C1", msg.ts)

        await socket.refresh()
        await socket.wait_connected()
        assert socket.connections == 2
        assert len(s.fake.calls_of("apps.connections.open")) == 2  # a fresh single-use URL

        await socket.message(s.fake.user_message("C1", "U1", DAYS[0], thread_ts=msg.ts))
        plan = await s.wait_plan("C1", msg.ts)
        assert f"trip on {DAYS[0]}" in plan.text


async def test_a_dead_socket_mode_connection_makes_healthz_say_slack(tmp_path: Path) -> None:
    async with socket_stack(tmp_path) as (s, socket):
        assert s.runtime.server is not None
        s.adapter.intake.socket_grace_s = 0.3  # the SDK's own reconnect gets this long before it counts
        async with httpx.AsyncClient(base_url=s.runtime.server.base_url, timeout=5) as http:
            up = await http.get("/healthz")
            assert up.status_code == 200 and up.json()["checks"]["slack"] is True
            await socket.close()  # Slack's end is gone, and no new connection gets through

            async def unhealthy() -> httpx.Response:
                while (res := await http.get("/healthz")).status_code == 200:
                    await asyncio.sleep(0.05)
                return res

            down = await asyncio.wait_for(unhealthy(), 10)
            assert down.status_code == 503 and down.json()["unhealthy"] == ["slack"]
            assert down.json()["checks"]["store"] is True
