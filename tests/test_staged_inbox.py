"""A message's run may begin while its inbox row commits (Store.stage_inbox), and nothing of
that run is stored or sent before the commit; a commit that fails takes the run back."""

from __future__ import annotations

import asyncio
import time

import pytest

from bot.run.records import message_to_json
from bot.store.base import InboxRow, StoreError
from bot.surface import ChatKey
from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.spine_support import RecordingSurface, make_llm, make_settings, msg, start_runtime

A = ChatKey("test", "staged")


async def until(predicate, timeout: float = 5.0) -> None:  # type: ignore[no-untyped-def]
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


@pytest.mark.parametrize("commit", ["succeeds", "fails"])
async def test_the_run_waits_for_its_message_commit_before_it_stores_or_sends(tmp_path, commit):
    script = [reply(tool_calls=[call("ask_human", {"inquire": "Which day?"}, id="call_day")])]
    surface = RecordingSurface()
    async with FakeOpenAI(script) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            # a row as stage_inbox hands it over: written, its commit still pending
            row = InboxRow(10_000, "test", "d1", str(A), message_to_json(msg(A, "Plan a trip", dedup="d1")), time.time())
            committed: asyncio.Future[object] = asyncio.get_running_loop().create_future()
            rt.manager.wake(str(A), (row, committed))
            await until(lambda: len(fake.requests) == 1)  # the model is asked at once
            fake.assert_complete()
            with pytest.raises(TimeoutError):  # ... but its question waits for the commit
                await surface.wait_count("question", 1, timeout=0.3)
            assert await rt.manager.store.get_session(str(A)) is None
            if commit == "succeeds":
                committed.set_result(10_000)
                await surface.wait_count("question", 1)
                session = await rt.manager.store.get_session(str(A))
                assert session is not None and session.state == "asking"
            else:
                committed.set_exception(StoreError("disk full"))
                await until(lambda: str(A) not in rt.manager._actors)  # the chat is quiet again
                assert await rt.manager.store.get_session(str(A)) is None
                assert surface.of("question") == [] and surface.of("notice") == []
        finally:
            await rt.stop()
