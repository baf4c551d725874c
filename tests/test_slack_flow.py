"""The Slack surface end to end: signed events into the real bot, Web API calls into the fake Slack."""

from __future__ import annotations

import copy
import logging
import time
from pathlib import Path

import pytest

from adapters.slack.mrkdwn import unescape
from tests.scripted_trip import DAYS, QUESTION_EN, QUESTION_ZH
from tests.slack_support import is_plan, slack_model, slack_stack


async def test_mention_question_reply_plan_in_the_thread(tmp_path: Path) -> None:
    async with slack_stack(tmp_path) as s:
        msg = s.mention(text="plan a trip from Beijing to Shanghai")
        delivery = await s.events.app_mention(msg)
        assert delivery.status == 200
        assert delivery.seconds < 1.0

        question = await s.wait_question("C1", msg.ts)
        assert question.thread_ts == msg.ts
        assert question.text.startswith("<@U1> ")  # the person is mentioned
        assert QUESTION_EN in unescape(question.text)
        assert question.button_values() == list(DAYS)

        reply = s.fake.user_message("C1", "U1", f"let's go on {DAYS[1]}", thread_ts=msg.ts)
        assert (await s.events.message(reply)).status == 200
        plan = await s.wait_plan("C1", msg.ts)
        assert plan.thread_ts == msg.ts
        texts = [b["text"]["text"] for b in plan.blocks if b["type"] in ("header", "section")]
        assert texts[0] == "Beijing → Shanghai"
        joined = "\n".join(texts)
        assert "G1" in joined and "Bund Riverside Hotel" in joined and "The Bund" in joined
        assert f"trip on {DAYS[1]}" in joined and f"trip on {DAYS[0]}" not in joined
        assert "*G1*" in joined  # the model's **bold** became mrkdwn
        assert any("Sandbox" in e["text"] for b in plan.blocks if b["type"] == "context" for e in b["elements"])
        assert "G1" in plan.text  # the text fallback carries the plan too

        # progress lived in one status message per segment, edited in place, above the question
        posts = s.fake.bot_posts("C1", msg.ts)
        statuses = [m for m in posts if m.stream is None and (not m.blocks or m.accessory_actions() == ["stop_run"])]
        assert len(statuses) == 2
        assert posts.index(statuses[0]) < posts.index(question) < posts.index(statuses[1]) < posts.index(plan)
        # the final text of a status follows its question or answer (it never holds them back)
        await s.fake.wait_for(lambda f: "⏸" in statuses[0].text and "✅" in statuses[1].text, 5)
        await s.fake.wait_for(lambda f: not statuses[1].blocks, 5)  # the Stop button went with the run
        assert s.model.calls == 2
        assert s.fake.find("C1", msg.ts).reactions == ["eyes"]  # type: ignore[union-attr]
        # nothing was posted outside the thread
        assert all(m.thread_ts == msg.ts for m in s.fake.bot_posts("C1"))


async def test_button_answers_and_a_second_click_is_ignored(tmp_path: Path) -> None:
    async with slack_stack(tmp_path) as s:
        msg = s.mention(text="帮我规划北京到上海的行程")
        await s.events.app_mention(msg)
        question = await s.wait_question("C1", msg.ts)
        assert QUESTION_ZH in unescape(question.text)

        stale_copy = copy.deepcopy(question)  # what a second person's client still shows
        click = await s.events.block_action(question, user="U1", value=DAYS[1])
        assert click.status == 200
        plan = await s.wait_plan("C1", msg.ts)
        assert any(DAYS[1] in b["text"]["text"] for b in plan.blocks if b["type"] == "section")
        # the buttons gave way to the choice
        await s.fake.wait_for(lambda f: not (f.find("C1", question.ts) or question).button_values())
        chosen = s.fake.find("C1", question.ts)
        assert chosen is not None and "<@U1>" in str(chosen.blocks) and DAYS[1] in str(chosen.blocks)

        calls = s.model.calls
        again = await s.events.block_action(stale_copy, user="U2", value=DAYS[0])
        assert again.status == 200
        await s.adapter.wait_inbound(lambda c: c["stale"] == 1, within=5)
        await s.runtime.manager.wait_until_idle(plan_chat(msg.ts), timeout=5)
        assert s.model.calls == calls
        assert sum(is_plan(m) for m in s.fake.bot_posts("C1", msg.ts)) == 1


def collapsed(statuses: list[str]) -> list[str]:
    """The statuses a session went through (setting one twice in a row changes nothing)."""
    return [x for i, x in enumerate(statuses) if i == 0 or statuses[i - 1] != x]


def plan_chat(thread_ts: str, channel: str = "C1"):  # type: ignore[no-untyped-def]
    from bot.surface import ChatKey

    return ChatKey("slack", channel, thread_ts)


async def test_two_threads_in_one_channel_at_once(tmp_path: Path) -> None:
    async with slack_stack(tmp_path) as s:
        a = s.mention(user="U1", text="trip A")
        b = s.mention(user="U2", text="trip B")
        await s.events.app_mention(a)
        await s.events.app_mention(b)
        qa = await s.wait_question("C1", a.ts)
        qb = await s.wait_question("C1", b.ts)
        assert qa.text.startswith("<@U1>") and qb.text.startswith("<@U2>")
        await s.events.message(s.fake.user_message("C1", "U2", DAYS[0], thread_ts=b.ts))
        await s.events.message(s.fake.user_message("C1", "U1", DAYS[1], thread_ts=a.ts))
        pa = await s.wait_plan("C1", a.ts, within=15)
        pb = await s.wait_plan("C1", b.ts, within=15)
        assert f"trip on {DAYS[1]}" in pa.text and f"trip on {DAYS[0]}" not in pa.text
        assert f"trip on {DAYS[0]}" in pb.text and f"trip on {DAYS[1]}" not in pb.text
        assert {m.thread_ts for m in s.fake.bot_posts("C1")} == {a.ts, b.ts}


async def test_forged_and_stale_requests_are_refused_and_not_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with slack_stack(tmp_path) as s:
        msg = s.mention(text="SECRET-BODY-MARKER trip")
        forged = await s.events.app_mention(msg, signature="v0=" + "0" * 64)
        stale = await s.events.app_mention(msg, timestamp=str(int(time.time()) - 6 * 60))
        unsigned = await s.events.app_mention(msg, signature="")
        assert (forged.status, stale.status, unsigned.status) == (401, 401, 401)
        assert "SECRET-BODY-MARKER" not in caplog.text
        assert "forged" in caplog.text and "stale" in caplog.text
        ok = await s.events.app_mention(msg, timestamp=str(int(time.time()) - 4 * 60))  # inside the window
        assert ok.status == 200
        await s.wait_question("C1", msg.ts)
        assert s.model.calls == 1


async def test_url_verification_is_answered(tmp_path: Path) -> None:
    async with slack_stack(tmp_path) as s:
        d = await s.events.url_verification("3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P")
        assert d.status == 200
        assert "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" in d.body
        forged = await s.events.url_verification("x", signature="v0=bad")
        assert forged.status == 401


async def test_redelivery_and_mention_as_message_are_handled_once(tmp_path: Path) -> None:
    async with slack_stack(tmp_path) as s:
        msg = s.mention()
        first = await s.events.app_mention(msg, event_id="Ev0001")
        retry = await s.events.app_mention(msg, event_id="Ev0001", retry_num=1)
        as_message = await s.events.message(msg, event_id="Ev0002")
        assert (first.status, retry.status, as_message.status) == (200, 200, 200)
        await s.wait_question("C1", msg.ts)
        await s.adapter.wait_inbound(lambda c: c["accepted"] == 1 and c["duplicate"] == 2, within=5)
        questions = [m for m in s.fake.bot_posts("C1", msg.ts) if m.button_values()]
        assert len(questions) == 1
        assert s.model.calls == 1
        # the reply too, redelivered
        reply = s.fake.user_message("C1", "U1", DAYS[0], thread_ts=msg.ts)
        await s.events.message(reply)
        await s.events.message(reply, retry_num=2)
        await s.adapter.wait_inbound(lambda c: c["accepted"] == 2 and c["duplicate"] == 3, within=5)
        await s.wait_plan("C1", msg.ts)
        await s.runtime.manager.wait_until_idle(plan_chat(msg.ts), timeout=5)
        assert sum(is_plan(m) for m in s.fake.bot_posts("C1", msg.ts)) == 1
        assert s.model.calls == 2


async def test_bots_own_messages_and_unrelated_messages_are_ignored(tmp_path: Path) -> None:
    async with slack_stack(tmp_path) as s:
        msg = s.mention()
        await s.events.app_mention(msg)
        question = await s.wait_question("C1", msg.ts)
        # the bot's own question echoed back as a message event, and another bot in the thread
        assert (await s.events.message(question)).status == 200
        other_bot = s.fake.user_message("C1", "U9", DAYS[1], thread_ts=msg.ts)
        other_bot.bot_id = "BOTHER"
        assert (await s.events.message(other_bot)).status == 200
        edited = await s.events.event({"type": "message", "subtype": "message_changed", "channel": "C1",
                                       "ts": f"{time.time():.6f}", "hidden": True,
                                       "message": {"type": "message", "user": "U1", "text": DAYS[1]}})
        assert edited.status == 200
        # a channel message without a mention and a reply in a thread the bot has no session for
        loose = s.fake.user_message("C1", "U1", "lunch?")
        await s.events.message(loose)
        stray = s.fake.user_message("C1", "U1", DAYS[1], thread_ts=loose.ts)
        await s.events.message(stray)
        # an unsubscribed event type is still acknowledged (or Slack would redeliver it)
        other = await s.events.event({"type": "reaction_added", "user": "U1", "reaction": "tada",
                                      "item": {"type": "message", "channel": "C1", "ts": msg.ts},
                                      "event_ts": f"{time.time():.6f}"})
        assert other.status == 200
        # Bolt drops the bot's own echo before our listener; the other four reach it and are ignored
        await s.adapter.wait_inbound(lambda c: c["ignored"] >= 4, within=5)
        assert s.adapter.inbound["accepted"] == 1
        info = await s.runtime.manager.session_info(plan_chat(msg.ts))
        assert info is not None and info.state in ("waiting", "parked")
        assert s.model.calls == 1
        assert s.fake.bot_posts("C1", loose.ts) == []


@pytest.mark.real_pace  # Slack's seconds as they are: the bot and the fake at BOT_PLATFORM_TIME_SCALE=1
async def test_rate_limited_post_is_retried_after_retry_after(tmp_path: Path) -> None:
    async with slack_stack(tmp_path) as s:
        assert s.fake.time_scale == 1.0
        msg = s.mention()
        await s.events.app_mention(msg)
        await s.wait_question("C1", msg.ts)
        await s.fake.wait_for(lambda f: "⏸" in f.bot_posts("C1", msg.ts)[0].text)  # progress settled
        s.fake.ratelimit("chat.postMessage", count=1, retry_after=1)
        await s.events.message(s.fake.user_message("C1", "U1", DAYS[0], thread_ts=msg.ts))
        await s.wait_plan("C1", msg.ts, within=15)
        posts = s.fake.calls_of("chat.postMessage")
        limited = [i for i, c in enumerate(posts) if c.status == 429]
        assert len(limited) == 1
        after = posts[limited[0] + 1]
        assert after.status == 200 and after.at - posts[limited[0]].at >= 1.0
        assert sum(is_plan(m) for m in s.fake.bot_posts("C1", msg.ts)) == 1


async def test_thread_words_cancel_and_status(tmp_path: Path) -> None:
    async with slack_stack(tmp_path) as s:
        msg = s.mention()
        await s.events.app_mention(msg)
        await s.wait_question("C1", msg.ts)
        before = len(s.fake.bot_posts("C1", msg.ts))
        await s.events.message(s.fake.user_message("C1", "U1", "Status", thread_ts=msg.ts))
        posts = await s.wait_posts("C1", msg.ts, before + 1)
        assert QUESTION_EN in unescape(posts[-1].text)  # "waiting for your answer to: ..."
        await s.events.message(s.fake.user_message("C1", "U1", "cancel", thread_ts=msg.ts))
        posts = await s.wait_posts("C1", msg.ts, before + 2)
        assert "Stopped" in posts[-1].text
        assert await s.runtime.manager.pending_question(plan_chat(msg.ts)) is None


async def test_dm_starts_a_session(tmp_path: Path) -> None:
    async with slack_stack(tmp_path) as s:
        dm = s.fake.user_message("D1", "U1", "plan a trip to Shanghai")
        await s.events.message(dm)
        question = await s.wait_question("D1", dm.ts)
        await s.events.block_action(question, user="U1", value=DAYS[0])
        await s.wait_plan("D1", dm.ts)
        # the Agent experience: the DM thread's agent session went along with the chat
        await s.fake.wait_for(lambda f: f.agents.statuses("D1", dm.ts)[-1:] == ["active"])
        assert collapsed(s.fake.agents.statuses("D1", dm.ts)) == ["processing", "suspended", "processing", "active"]
        assert not s.fake.statuses  # and no Assistant thread status beside it


async def test_allowlist_refuses_others_politely(tmp_path: Path) -> None:
    async with slack_stack(tmp_path, BOT_ALLOWED_USERS="U1") as s:
        msg = s.mention(user="U2")
        await s.events.app_mention(msg)
        posts = await s.wait_posts("C1", msg.ts, 1)
        assert "U2" in posts[0].text and not posts[0].blocks
        await s.adapter.wait_inbound(lambda c: c["refused"] == 1, within=5)
        assert s.model.calls == 0
        assert await s.runtime.manager.session_info(plan_chat(msg.ts)) is None


@pytest.mark.parametrize("latency", [0.0])
async def test_ack_does_not_wait_for_the_model(tmp_path: Path, latency: float) -> None:
    async with slack_stack(tmp_path, model=slack_model(latency_s=2.0)) as s:
        msg = s.mention()
        d = await s.events.app_mention(msg)
        assert d.status == 200 and d.seconds < 0.5
        await s.wait_question("C1", msg.ts, within=10)
