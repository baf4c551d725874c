"""Runtime.start's `before_serving` hook: bot.py freezes its startup heap there (a full pass of
the garbage collector, 170 ms on a slow machine), so that pass is over before the process
answers /healthz, takes a chat's lease or is sent a webhook."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from adapters.runtime import build_runtime
from bot.store.base import StoreCounts
from tests.spine_support import make_llm, make_settings, make_tools, plain_prompt


async def test_before_serving_runs_with_the_store_open_and_before_the_server_answers(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, host="127.0.0.1", port=0)
    rt = build_runtime(settings, model=make_llm("http://127.0.0.1:9/v1"), tools=make_tools(), prompt=plain_prompt)
    loop = asyncio.get_running_loop()
    serving: list[bool] = []
    reads: list[asyncio.Task[StoreCounts]] = []

    def before_serving() -> None:
        assert rt.server is not None
        serving.append(rt.server.running)
        # started now, it runs at start's next await: a store opened later would refuse it
        reads.append(loop.create_task(rt.store.counts()))

    await rt.start(before_serving=before_serving)
    try:
        assert serving == [False]
        assert isinstance(await asyncio.wait_for(reads[0], 5), StoreCounts)
        assert rt.server is not None and rt.server.running
        async with httpx.AsyncClient(base_url=rt.server.base_url) as http:
            assert (await http.get("/healthz")).status_code == 200
    finally:
        await rt.stop()

