"""A conversation must leave no reference cycles behind.

Cyclic garbage is freed only by the collector's full passes, which run rarely once the process
holds many objects; until then it keeps its memory. A per-call retry object that referenced
itself (tenacity's) did that on every model call, and a thousand waiting conversations grew the
process by over a megabyte. These tests run real conversations through the real runtime with
the collector off and count what only the collector could free.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

from agent_core.schema import Message
from bot.surface import ChatKey
from tests.fakes.openai_server import FakeOpenAI, call, fault, reply
from tests.spine_support import RecordingSurface, make_llm, make_settings, msg, start_runtime


@contextmanager
def cyclic_garbage() -> Iterator[Counter[str]]:
    """Counts, by type, the objects created inside the block that only the collector can free."""
    found: Counter[str] = Counter()
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield found
    finally:
        gc.collect()
        found.update(f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.garbage)
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()


def ask(n: int) -> list:
    return [reply(tool_calls=[call("ask_human", {"inquire": "Which day?"}, id=f"call_ask_{n}")])]


async def test_pausing_answering_and_finishing_leave_no_cycles(tmp_path):
    chats = [ChatKey("test", f"c{i}") for i in range(10)]
    scripts = {f"c{i}": [*ask(i), reply("<answer>Friday it is.</answer>")] for i in range(10)}
    scripts["warm"] = [*ask(99), reply("<answer>Warm.</answer>")]
    surface = RecordingSurface()
    # a run that has posted its question holds nothing in memory
    async with FakeOpenAI(scripts=scripts) as fake:
        rt = await start_runtime(make_settings(tmp_path), make_llm(fake.base_url), surface)
        try:
            warm = ChatKey("test", "warm")  # first use fills caches and pools: not garbage, not measured
            await rt.manager.submit(msg(warm, "[conv:warm] hi", dedup="w"))
            await surface.wait_count("question", 1)
            await rt.manager.submit(msg(warm, "Friday", dedup="w2"))
            await surface.wait_count("answer", 1)
            with cyclic_garbage() as found:
                for i, chat in enumerate(chats):
                    await rt.manager.submit(msg(chat, f"[conv:c{i}] plan a trip", dedup=f"q{i}"))
                await surface.wait_count("question", len(chats) + 1)
                for chat in chats:
                    await rt.manager.wait_until_idle(chat, 5)
                parked = {(await rt.manager.session_info(c)).state for c in chats}  # type: ignore[union-attr]
                for i, chat in enumerate(chats):
                    await rt.manager.submit(msg(chat, "Friday", dedup=f"a{i}"))
                await surface.wait_count("answer", len(chats) + 1)
                for chat in chats:
                    await rt.manager.wait_until_idle(chat, 5)
            assert parked == {"parked"}
            assert not found, found.most_common(10)
            fake.assert_complete()
            assert {(await rt.manager.session_info(c)).state for c in chats} == {"idle"}  # type: ignore[union-attr]
        finally:
            await rt.stop()


async def test_a_retried_model_call_leaves_no_cycles() -> None:
    async with FakeOpenAI([reply("warm"), fault(503), fault(429, retry_after_ms=10), reply("ok")]) as fake:
        llm = make_llm(fake.base_url, backoff_base_s=0.01, backoff_cap_s=0.02)
        try:
            assert await llm.ask([Message.user("hi")]) == "warm"
            with cyclic_garbage() as found:
                assert await llm.ask([Message.user("hi")]) == "ok"
            assert not found, found.most_common(10)
            fake.assert_complete()
        finally:
            await llm.aclose()


async def test_a_call_that_gives_up_leaves_no_cycles() -> None:
    from agent_core.errors import LLMUnavailable

    async with FakeOpenAI([reply("warm"), fault(503), fault(503), fault(503)]) as fake:
        llm = make_llm(fake.base_url, backoff_base_s=0.01, backoff_cap_s=0.02, max_retries=2)
        try:
            assert await llm.ask([Message.user("hi")]) == "warm"
            with cyclic_garbage() as found:
                try:
                    await llm.ask([Message.user("hi")])
                except LLMUnavailable as exc:
                    assert exc.attempts == 3
                else:
                    raise AssertionError("the call should have given up")
            assert not found, found.most_common(10)
        finally:
            await llm.aclose()
