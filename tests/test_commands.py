"""Commands: a command nobody has ("/foo") answers "/foo: no such command" with the help and is
never taken as a trip request, whatever the chat is doing; the help names /stop."""

from __future__ import annotations

import pytest

from bot.chat.commands import UNKNOWN, command_of
from bot.surface import ChatKey
from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.spine_support import RecordingSurface, make_llm, make_settings, msg, start_runtime

A = ChatKey("test", "commands")


@pytest.mark.parametrize(("text", "command"), [
    ("/help", "help"), ("/start", "help"), ("/STOP", "stop"), ("/status@trip_test_bot", "status"),
    ("/trip approver @bo", "trip"),
    ("/foo", UNKNOWN), ("/foo bar baz", UNKNOWN), ("/foo@trip_test_bot", UNKNOWN), ("/plan_trip", UNKNOWN),
    ("/home/me/trip.txt", None), ("/ 北京到上海", None), ("北京到上海", None), ("1/2 day", None), ("", None),
])
def test_what_reads_as_a_command(text: str, command: str | None) -> None:
    assert command_of(text) == command


async def test_an_unknown_command_gets_the_help_and_never_becomes_a_trip(tmp_path) -> None:
    surface = RecordingSurface()
    async with FakeOpenAI([reply(tool_calls=[call("ask_human", {"inquire": "Budget?"})])]) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "/foo", lang="en"))  # a new chat: a command takes the hint
            await surface.wait_for(lambda s: len(s.of("notice")) == 1)
            [notice] = surface.of("notice")
            assert notice.kind == "help"
            assert notice.text.startswith("/foo: no such command.\n\n")
            assert "/stop" in notice.text and "/new" in notice.text  # the help follows, /stop in it
            assert await rt.manager.session_info(A) is None and fake.request_count == 0  # no trip was started

            await rt.manager.submit(msg(A, "trip please", dedup="t"))
            await surface.wait_count("question", 1)
            await rt.manager.submit(msg(A, "/budget 3000", dedup="b"))  # while a question waits
            await surface.wait_for(lambda s: len(s.of("notice")) == 2)
            assert surface.of("notice")[-1].text.startswith("/budget: no such command.")
            assert (await rt.manager.pending_question(A)) is not None  # not taken as the answer
            assert fake.request_count == 1
        finally:
            await rt.stop()


async def test_the_unknown_command_is_answered_in_chinese_too(tmp_path) -> None:
    surface = RecordingSurface()
    async with FakeOpenAI([]) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            await rt.manager.submit(msg(A, "/foo", lang="zh"))
            await surface.wait_for(lambda s: any(n.kind == "help" for n in s.of("notice")))
            help_notice = next(n for n in surface.of("notice") if n.kind == "help")
            assert help_notice.text.startswith("/foo：没有这个命令。") and "/stop" in help_notice.text
            assert fake.request_count == 0
        finally:
            await rt.stop()
