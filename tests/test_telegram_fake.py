"""The fake Bot API is as strict as Telegram where the adapter depends on it, and maps updates the
way the adapter expects. Driven by the real python-telegram-bot."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.error import BadRequest, Conflict, Forbidden, InvalidToken, RetryAfter

from adapters.telegram.lane import retry_seconds
from adapters.telegram.updates import Route, map_update, stop_data
from bot.surface import MessageKind, run_ref
from tests.fakes.telegram_api import FakeTelegram, FakeTelegramClient


@pytest.fixture
async def tg():
    async with FakeTelegram() as fake:
        yield fake


@pytest.fixture
async def bot(tg):
    b = Bot(tg.token, base_url=tg.base_url)
    async with b:
        yield b


async def test_messages_are_checked_like_telegram_does(tg, bot):
    tg.send_text(1, "hi")
    with pytest.raises(BadRequest, match=r"(?i)chat not found"):
        await bot.send_message(2, "x")
    with pytest.raises(BadRequest, match=r"(?i)too long"):
        await bot.send_message(1, "x" * 4097)
    await bot.send_message(1, "<b>" + "x" * 4096 + "</b>", parse_mode="HTML")  # tags do not count
    with pytest.raises(BadRequest, match=r"(?i)can't parse entities"):
        await bot.send_message(1, "1 < 2", parse_mode="HTML")
    with pytest.raises(BadRequest, match=r"(?i)text is empty"):
        await bot.send_message(1, "<b> </b>", parse_mode="HTML")
    markup = InlineKeyboardMarkup([[InlineKeyboardButton("x", callback_data="d" * 65)]])
    with pytest.raises(BadRequest, match=r"(?i)button_data_invalid"):
        await bot.send_message(1, "pick", reply_markup=markup)
    sent = await bot.send_message(1, "same")
    with pytest.raises(BadRequest, match=r"(?i)not modified"):
        await bot.edit_message_text("same", 1, sent.message_id)
    with pytest.raises(BadRequest, match=r"(?i)message to edit not found"):
        await bot.edit_message_text("other", 1, 999)
    with pytest.raises(BadRequest, match=r"(?i)can't be edited"):
        await bot.edit_message_text("other", 1, 1)  # the person's own message
    tg.block(1)
    with pytest.raises(Forbidden):
        await bot.send_message(1, "x")


async def test_flood_answers_429_with_retry_after_and_counts_ignoring_it(tg, bot):
    tg.send_text(1, "hi")
    tg.flood(1, 5)
    with pytest.raises(RetryAfter) as first:
        await bot.send_message(1, "x")
    assert retry_seconds(first.value) == 5
    with pytest.raises(RetryAfter):
        await bot.send_message(1, "x")
    assert [v.kind for v in tg.violations] == ["ignored_retry_after"]


async def test_flood_control_mode_refuses_a_second_message_within_a_second(bot):
    async with FakeTelegram(flood_control=True) as strict:
        strict_bot = Bot(strict.token, base_url=strict.base_url)
        async with strict_bot:
            strict.send_text(1, "hi")
            await strict_bot.send_message(1, "one")
            with pytest.raises(RetryAfter):
                await strict_bot.send_message(1, "two")
        assert len(strict.bot_messages(1)) == 1 and strict.violations[0].kind == "chat"


async def test_wrong_token_is_unauthorized(tg):
    with pytest.raises(InvalidToken):
        await Bot("999:wrong", base_url=tg.base_url).initialize()


async def test_get_updates_long_polls_confirms_by_offset_and_conflicts(tg, bot):
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    assert await bot.get_updates(timeout=1) == ()
    assert loop.time() - t0 >= 0.9  # a real long poll
    waiting = asyncio.ensure_future(bot.get_updates(timeout=5))
    await asyncio.sleep(0.05)  # let the poll reach the server before the update exists
    uid = tg.send_text(1, "hello")
    updates = await waiting
    assert [u.update_id for u in updates] == [uid]
    assert [u.update_id for u in await bot.get_updates(timeout=0)] == [uid]  # not confirmed yet
    assert await bot.get_updates(offset=uid + 1, timeout=0) == ()
    async with Bot(tg.token, base_url=tg.base_url) as second_instance:
        first = asyncio.ensure_future(bot.get_updates(offset=uid + 1, timeout=5))
        await asyncio.sleep(0.05)
        await second_instance.get_updates(offset=uid + 1, timeout=0)
        with pytest.raises(Conflict, match="terminated by other getUpdates"):
            await first
    await bot.set_webhook("http://127.0.0.1:9/hook", secret_token="abc")
    with pytest.raises(Conflict, match="webhook is active"):
        await bot.get_updates(timeout=0)
    with pytest.raises(BadRequest, match=r"(?i)unallowed characters"):
        await bot.set_webhook("http://127.0.0.1:9/hook", secret_token="no spaces please")


async def test_callback_queries_can_be_answered_once(tg, bot):
    tg.send_text(1, "hi")
    sent = await bot.send_message(1, "pick", reply_markup=InlineKeyboardMarkup([[InlineKeyboardButton("A", callback_data="o:0")]]))
    tg.press_button(1, sent.message_id, index=0)
    update = (await bot.get_updates(timeout=0))[-1]
    assert update.callback_query.data == "o:0" and update.callback_query.message.message_id == sent.message_id
    await bot.answer_callback_query(update.callback_query.id, text="ok")
    with pytest.raises(BadRequest, match=r"(?i)query is too old"):
        await bot.answer_callback_query(update.callback_query.id, text="again")


async def test_updates_map_to_what_the_session_manager_expects(tg, bot):
    group = -1001
    tg.send_text(group, "@trip_test_bot  plan Chengdu", user_id=5, first_name="Li", lang="zh-hans")
    tg.send_text(group, "/new@trip_test_bot", user_id=5)
    tg.send_text(group, "just chatting", user_id=6, reply_to=1)
    tg.send_location(9, 30.66, 104.06, venue="Tianfu Square")
    tg.send_text(9, "/status@other_bot")
    tg.press_button(9, 1, data="junk")
    tg.edit_user_message(9, 1, "changed")
    updates = await bot.get_updates(timeout=0)
    mapped = [map_update(u, bot_id=tg.bot_id, bot_username=tg.bot_username) for u in updates]

    mention, command, chatter, location, other_bot, junk, edited = mapped
    assert mention.route is Route.SUBMIT and mention.addressed and mention.lang == "zh"
    assert mention.message.text == "plan Chengdu" and mention.message.is_group
    assert mention.message.chat.platform == "telegram" and mention.message.chat.chat_id == str(group)
    assert mention.message.user_id == "5" and mention.message.user_name == "Li"
    assert mention.message.dedup_id == str(updates[0].update_id)
    assert command.message.text == "/new" and command.addressed
    assert not chatter.addressed and chatter.message.reply_to == "1"  # a reply to a person, not the bot
    assert location.message.kind is MessageKind.LOCATION and location.message.text == ""
    assert location.message.location.label == "Tianfu Square"
    assert other_bot.route is Route.IGNORE
    assert junk.route is Route.BAD_BUTTON and junk.callback_id
    assert edited.route is Route.IGNORE
    assert all(isinstance(u, Update) for u in updates)


async def test_a_stop_button_names_its_run_and_a_bare_or_junk_one_does_not(tg, bot):
    ref = run_ref("0123456789abcdef0123456789abcdef", 12)
    assert stop_data(ref) == f"stop:{ref}" and len(stop_data(ref).encode()) <= 64
    assert stop_data("") == "stop"
    tg.send_text(9, "plan Chengdu")
    for data in (stop_data(ref), "stop", "stop:not a run", f"stop:{ref}x"):
        tg.press_button(9, 1, data=data)
    updates = (await bot.get_updates(timeout=0))[1:]
    named, bare, junk, bad = [map_update(u, bot_id=tg.bot_id, bot_username=tg.bot_username) for u in updates]
    assert named.route is Route.STOP and named.message.text == "/stop" and named.message.run == ref
    assert bare.route is Route.STOP and bare.message.run is None  # stops whatever runs, like a typed /stop
    assert junk.route is Route.BAD_BUTTON and bad.route is Route.BAD_BUTTON


async def test_the_fake_runs_as_its_own_process():
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.fakes.telegram_api", "--port", "0", stdout=asyncio.subprocess.PIPE)
    try:
        assert proc.stdout is not None
        info = json.loads(await asyncio.wait_for(proc.stdout.readline(), 20))
        client = FakeTelegramClient(info["port"])
        await client.inject("text", chat_id=3, text="hello")
        async with Bot(info["token"], base_url=info["base_url"]) as b:
            (update,) = await b.get_updates(timeout=0)
            await b.send_message(3, f"echo {update.message.text}")
        bot_msgs = await client.wait_for_bot_messages(3, lambda ms: len(ms) == 1)
        assert bot_msgs[0]["text"] == "echo hello"
        assert (await client.state())["violations"] == []
    finally:
        proc.terminate()
        await proc.wait()
