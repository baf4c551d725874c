"""`python -m tests.spine_bot`: the real runtime with small test tools on the console surface.

Kill-and-restart tests run this as a subprocess: configuration comes from the environment
(BOT_DB_PATH, OPENAI_BASE_URL, OPENAI_API_KEY, BOT_HUMAN_TIMEOUT_S, ...), lines are typed on
stdin, and everything the bot says is read from stdout.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from pathlib import Path

from adapters.console import ConsoleSurface, run_console
from adapters.runtime import build_runtime
from agent_core.llm import LLM
from agent_core.llm_config import LLMConfig
from bot.settings import Settings
from tests.spine_support import make_tools, plain_prompt
from tripbot.telemetry import make_tracer


async def main() -> None:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    settings = Settings()
    async with contextlib.AsyncExitStack() as resources:
        tracer = make_tracer(settings, resources)  # as bot.py does: OTEL_EXPORTER_OTLP_ENDPOINT, BOT_TRACE
        llm = LLM(LLMConfig(
            model=settings.llm_model, api_key=settings.openai_api_key or "sk-test", base_url=settings.openai_base_url,
            max_retries=2, backoff_base_s=0.01, backoff_cap_s=0.05, timeout_s=30,
        ), tracer=tracer)
        surface = ConsoleSurface()
        runtime = build_runtime(
            settings, model=llm, tools=make_tools(Path(os.environ["SPINE_WORKDIR"])), prompt=plain_prompt,
            serve_http=False, extra_surfaces=[surface], tracer=tracer,
        )
        await runtime.start()
        surface._print("[ready]")
        try:
            await run_console(runtime.manager, surface)
        finally:
            await runtime.stop()
            await llm.aclose()


if __name__ == "__main__":
    asyncio.run(main())
