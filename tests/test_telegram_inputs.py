"""Everything people (and other bots) send that is not a plain trip request, and the webhook."""

from __future__ import annotations

import socket

import httpx

from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.fakes.telegram_api import FakeTelegram
from tests.telegram_support import containing, has, telegram_bot, texts

CHAT = 5151
UNSUPPORTED_EN = "I can only read text (and shared locations)"


async def test_bad_inputs_get_a_short_reply_or_silence_and_never_crash(tmp_path):
    async with FakeOpenAI([]) as llm, FakeTelegram() as tg, telegram_bot(tmp_path, tg, llm.base_url):
        tg.send_sticker(CHAT)
        tg.send_photo(CHAT)
        tg.send_voice(CHAT)
        first = tg.send_text(CHAT, "/help@trip_test_bot")
        tg.edit_user_message(CHAT, tg.chats[CHAT].next_message_id - 1, "edited text")  # ignored
        tg.send_text(CHAT, "I am a bot", from_bot=True)  # ignored
        tg.send_text(CHAT, "who am I", no_from=True)  # ignored
        tg.send_text(CHAT, "/start@some_other_bot")  # ignored: not for us
        tg.send_location(CHAT, 31.2304, 121.4737, venue="People's Square")
        tg.send_sticker(-100999, user_id=7)  # group chatter: not addressed to the bot, silence
        tg.press_button(CHAT, tg.chats[CHAT].next_message_id - 1, data="x" * 64)  # junk on a user message
        tg.send_text(CHAT, "/status")
        # updates are handled in order, so once /status is answered every earlier one was handled
        await tg.wait_for(lambda t: has("Idle", CHAT)(t) or has("空闲中", CHAT)(t), within=10)

        got = texts(tg, CHAT)
        assert sum(UNSUPPORTED_EN in t for t in got) == 3, got
        assert sum("I plan trips." in t for t in got) == 1, got  # /help
        assert any("Got your location" in t or "已记下你的位置" in t for t in got), got
        assert len(got) == 6, got  # 3 notes, help, location, status: nothing for the ignored ones
        assert tg.bot_messages(-100999) == []
        assert llm.requests == []  # nothing reached the model
        assert first in tg.history  # sanity: the fake really made these updates
        assert len(tg.callback_answers) == 1


async def test_chinese_speakers_get_the_note_in_chinese(tmp_path):
    async with FakeOpenAI([]) as llm, FakeTelegram() as tg, telegram_bot(tmp_path, tg, llm.base_url):
        tg.send_photo(CHAT, lang="zh-hans")
        await tg.wait_for(has("我只能读文字", CHAT), within=10)


async def test_people_off_the_allowlist_are_refused_politely(tmp_path):
    async with FakeOpenAI([]) as llm, FakeTelegram() as tg, \
            telegram_bot(tmp_path, tg, llm.base_url, allowed_users=["1"]):
        tg.send_text(CHAT, "Plan a trip to Chengdu please")
        await tg.wait_for(has("only serves listed users", CHAT), within=10)
        assert str(CHAT) in texts(tg, CHAT)[0]  # tells them the id the admin needs
        assert llm.requests == []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_webhook_mode_checks_the_secret_and_delivers_once(tmp_path):
    port = _free_port()
    url = f"http://127.0.0.1:{port}/telegram/hook-path"
    script = [reply(tool_calls=[call("lookup", {"city": "Chengdu"})]), reply("Chengdu is sunny.")]
    async with FakeOpenAI(script) as llm, FakeTelegram() as tg, telegram_bot(
            tmp_path, tg, llm.base_url, serve_http=True, port=port, telegram_webhook_url=url,
            telegram_webhook_secret="s3cret-Token_1"):
        assert tg.webhook_url == url and tg.webhook_secret == "s3cret-Token_1"

        async with httpx.AsyncClient() as client:
            body = {"update_id": 1, "message": {"message_id": 1, "date": 0, "chat": {"id": CHAT, "type": "private"},
                                                 "from": {"id": CHAT, "is_bot": False, "first_name": "Eve"},
                                                 "text": "forged"}}
            wrong = await client.post(url, json=body, headers={"X-Telegram-Bot-Api-Secret-Token": "nope"})
            missing = await client.post(url, json=body)
        assert (wrong.status_code, missing.status_code) == (403, 403)

        update_id = tg.send_text(CHAT, "Weather in Chengdu?")
        await tg.wait_for(has("Chengdu is sunny.", CHAT), within=10)
        tg.redeliver(update_id)  # Telegram sends it again: the inbox drops the duplicate
        tg.send_text(CHAT, "/status")
        await tg.wait_for(has("Idle", CHAT), within=10)
        assert len(containing(tg, CHAT, "Chengdu is sunny.")) == 1
        assert len(llm.requests) == 2
        assert not any("forged" in str(r.messages) for r in llm.requests)
        assert tg.calls("getUpdates") == []
        assert all(status == 200 for _, status in tg.webhook_deliveries)


async def test_healthz_says_when_telegram_stops_delivering_to_the_webhook(tmp_path):
    port = _free_port()
    url = f"http://127.0.0.1:{port}/telegram/hook-path"
    async with FakeOpenAI([]) as llm, FakeTelegram() as tg, telegram_bot(
            tmp_path, tg, llm.base_url, serve_http=True, port=port, telegram_webhook_url=url,
            telegram_webhook_secret="s3cret-Token_1") as (_rt, adapter):
        adapter.webhook_health.every_s = 0  # ask getWebhookInfo at every /healthz
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            up = await client.get("/healthz")
            assert up.status_code == 200 and up.json()["checks"]["telegram"] is True

            tg.webhook_secret = "another-secret"  # Telegram's deliveries are now refused (403)
            tg.send_text(CHAT, "hello?")
            await tg.wait_for(lambda t: t.webhook_last_error is not None, within=10)
            down = await client.get("/healthz")
            assert down.status_code == 503 and down.json()["unhealthy"] == ["telegram"]
            assert "Wrong response from the webhook: 403" in adapter.webhook_health.problem

            tg.webhook_secret, tg.webhook_url = "s3cret-Token_1", "https://elsewhere.example/hook"
            tg.pending.clear()
            moved = await client.get("/healthz")
            assert moved.status_code == 503 and "elsewhere.example" in adapter.webhook_health.problem
