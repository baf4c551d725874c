"""The real bot runtime with the Slack surface as a separate process (scripted model), for kill tests and the benchmark.

    python -m tests.slack_bot_process --db PATH --slack-api URL [--latency-ms 200] [--port 0]

prints one JSON line ``{"port": ..., "base_url": ...}`` once it serves; SIGTERM stops it cleanly,
SIGKILL is what the restart test uses. Everything but the model is the production code path
(adapters.runtime.build_runtime), configured through Settings exactly like bot.py does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from pathlib import Path

from adapters.runtime import build_runtime, freeze_startup_heap
from bot.settings import Settings
from tests.fakes.process import until_signalled
from tests.slack_support import SECRET, prompt, slack_model, tools


async def serve(args: argparse.Namespace) -> None:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, BOT_DB_PATH=args.db, BOT_HOST="127.0.0.1", BOT_PORT=args.port, BOT_VALIDATE="off",
        SLACK_BOT_TOKEN=args.token, SLACK_SIGNING_SECRET=SECRET, SLACK_API_BASE_URL=args.slack_api,
    )
    runtime = build_runtime(settings, model=slack_model(latency_s=args.latency_ms / 1000), tools=tools(),
                            prompt=prompt)
    await runtime.start(before_serving=freeze_startup_heap)  # as bot.py does
    assert runtime.server is not None
    print(json.dumps({"port": runtime.server.port, "base_url": runtime.server.base_url}), flush=True)
    await until_signalled()
    await runtime.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--slack-api", required=True)
    parser.add_argument("--token", default="xoxb-fake-token")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv if argv is not None else sys.argv[1:])
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    asyncio.run(serve(args))


if __name__ == "__main__":
    main()
