"""Crash soak: 100 Telegram conversations while the bot process is SIGKILLed 10 times.

Three processes besides this one: the fake Telegram Bot API (`python -m tests.fakes.telegram_api`),
the scripted model (benchmarks/_fake_model.py: ask_human -> train_search -> hotel_search ->
answer, with a model latency per call), and the real bot (`python bot.py` with
TELEGRAM_BOT_TOKEN, TELEGRAM_API_BASE_URL, OPENAI_BASE_URL, BOT_DB_PATH). People in 100 private
chats write a request, wait for the question, answer it, and wait for the plan. Meanwhile the
bot is SIGKILLed at random moments (seeded) and restarted, 10 times. Afterwards every chat is
read back from the fake Telegram:

  completed     chats that got exactly the answer they asked for
  lost          user messages with no effect: a request that never got its question, or an
                answer after which no plan came (target 0)
  dup_answers   extra copies of the final answer in a chat (target 0)
  dup_questions extra copies of the question in a chat (target 0)

    python benchmarks/bench_crash_soak.py [--chats 100] [--kills 10] [--latency-ms 150] [--seed 7]

Prints ONE JSON line. Not part of `make test`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import ANSWER, QUESTION, REQUEST, ROOT, emit, guard_network
from _fake_model import FakeModelProcess

FINAL_MARK = "Bund View Hotel"  # in the scripted final answer (see _common.FINAL)
QUESTION_MARK = "❓"  # how the Telegram surface opens a question message
CHAT_BASE = 7_000_000


@dataclass
class Chat:
    chat_id: int
    index: int
    asked_at: float | None = None
    answered_at: float | None = None
    finished_at: float | None = None
    question_seen: bool = False
    final_seen: bool = False
    update_ids: list[int] = field(default_factory=list)


@dataclass
class Counters:
    kills: int = 0
    restarts: int = 0
    ready_s: list[float] = field(default_factory=list)
    kill_times: list[float] = field(default_factory=list)


class TelegramFake:
    """The fake Bot API as a process, and its test API over HTTP."""

    def __init__(self) -> None:
        self.proc: asyncio.subprocess.Process | None = None
        self.info: dict[str, Any] = {}
        self.session: Any = None

    async def start(self) -> TelegramFake:
        import aiohttp

        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tests.fakes.telegram_api", "--port", "0", cwd=ROOT,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        )
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), 30)
        self.info = json.loads(line)
        self.session = aiohttp.ClientSession()
        return self

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.info['port']}/_fake"

    async def say(self, chat_id: int, text: str) -> int:
        body = {"chat_id": chat_id, "text": text, "user_id": chat_id, "lang": "en"}
        async with self.session.post(f"{self.root}/inject/text", json=body) as res:
            res.raise_for_status()
            return int((await res.json())["update_id"])

    async def bot_messages(self, chat_id: int) -> list[dict[str, Any]]:
        async with self.session.get(f"{self.root}/chats/{chat_id}") as res:
            data = await res.json()
        return [m for m in data["messages"] if m["from_bot"]]

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 10)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()


class Bot:
    """`python bot.py`, started, SIGKILLed and started again."""

    def __init__(self, env: dict[str, str], workdir: Path, log: Path) -> None:
        self.env, self.workdir, self.log = env, workdir, log
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self, timeout: float = 60) -> float:
        started = time.monotonic()
        with self.log.open("a") as err:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable, str(ROOT / "bot.py"), cwd=self.workdir, env=self.env,
                stdout=asyncio.subprocess.PIPE, stderr=err,
            )
        assert self.proc.stdout is not None
        async with asyncio.timeout(timeout):
            while True:
                line = await self.proc.stdout.readline()
                if not line:
                    raise RuntimeError(f"bot.py exited before it was ready (see {self.log})")
                if b"ready" in line:
                    break
        asyncio.create_task(self._drain(self.proc))  # noqa: RUF006  (ends with the process)
        return time.monotonic() - started

    @staticmethod
    async def _drain(proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        while await proc.stdout.readline():
            pass

    async def kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGKILL)
            await self.proc.wait()

    async def stop(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 20)
            except TimeoutError:
                await self.kill()


def bot_env(tg: TelegramFake, model_url: str, db: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "BOT_", "TELEGRAM_", "SLACK_"))}
    env.update({
        "TELEGRAM_BOT_TOKEN": tg.info["token"], "TELEGRAM_API_BASE_URL": tg.info["base_url"],
        "OPENAI_BASE_URL": model_url, "OPENAI_API_KEY": "sk-bench", "BOT_LLM_MODEL": "gpt-4o-mini",
        "BOT_DB_PATH": str(db), "BOT_PORT": "0", "BOT_VALIDATE": "off", "BOT_LOG_LEVEL": "WARNING",
        "BOT_LLM_MAX_RETRIES": "8", "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(ROOT),
    })
    return env


def is_question(m: dict[str, Any]) -> bool:
    return QUESTION in m["text"] and m["text"].lstrip().startswith(QUESTION_MARK)


def is_final(m: dict[str, Any]) -> bool:
    return FINAL_MARK in m["text"] and not is_question(m)


async def converse(tg: TelegramFake, chat: Chat, latency_ms: int, give_up_at: float) -> None:
    chat.asked_at = time.monotonic()
    chat.update_ids.append(await tg.say(chat.chat_id, f"[conv:soak-L{latency_ms}-{chat.index}] {REQUEST}"))
    while time.monotonic() < give_up_at:
        msgs = await tg.bot_messages(chat.chat_id)
        if not chat.question_seen and any(is_question(m) for m in msgs):
            chat.question_seen = True
            await asyncio.sleep(random.uniform(0.0, 0.5))  # a person takes a moment
            chat.answered_at = time.monotonic()
            chat.update_ids.append(await tg.say(chat.chat_id, ANSWER))
        if chat.question_seen and any(is_final(m) for m in msgs):
            chat.final_seen = True
            chat.finished_at = time.monotonic()
            return
        await asyncio.sleep(0.4)


async def killer(bot: Bot, kills: int, counters: Counters, stop: asyncio.Event) -> None:
    for _ in range(kills):
        await asyncio.sleep(random.uniform(0.5, 3.0))
        await bot.kill()
        counters.kills += 1
        counters.kill_times.append(time.monotonic())
        await asyncio.sleep(random.uniform(0.0, 0.5))
        counters.ready_s.append(await bot.start())
        counters.restarts += 1
    stop.set()


def _near_kill(t: float | None, kills: list[float]) -> float | None:
    """Seconds from `t` to the nearest kill (negative: the kill came first)."""
    if t is None or not kills:
        return None
    return round(min((k - t for k in kills), key=abs), 3)


async def tally(tg: TelegramFake, chats: list[Chat], kills: list[float]) -> dict[str, Any]:
    completed = lost = dup_answers = dup_questions = 0
    problems: list[dict[str, Any]] = []
    for chat in chats:
        msgs = await tg.bot_messages(chat.chat_id)
        questions = sum(1 for m in msgs if is_question(m))
        finals = sum(1 for m in msgs if is_final(m))
        dup_questions += max(0, questions - 1)
        dup_answers += max(0, finals - 1)
        stage = None
        if questions == 0:
            lost += 1  # the request had no effect
            stage, at = "request lost", chat.asked_at
        elif chat.answered_at is not None and finals == 0:
            lost += 1  # the answer had no effect
            stage, at = "answer lost", chat.answered_at
        elif questions > 1 or finals > 1:
            stage, at = f"{questions} questions, {finals} answers", chat.answered_at
        if questions >= 1 and finals >= 1:
            completed += 1
        if stage is not None:
            problems.append({"chat_id": chat.chat_id, "what": stage, "update_ids": chat.update_ids,
                             "s_to_nearest_kill": _near_kill(at, kills),
                             "bot_said": [m["text"][:80] for m in msgs][-4:]})
    return {"completed": completed, "lost": lost, "dup_answers": dup_answers, "dup_questions": dup_questions,
            "problems": problems[:5]}


async def soak(args: argparse.Namespace) -> dict[str, Any]:
    random.seed(args.seed)
    started = time.monotonic()
    with FakeModelProcess() as fm, tempfile.TemporaryDirectory(prefix="bench-soak-") as tmp_name:
        tmp = args.keep or Path(tmp_name)
        tmp.mkdir(parents=True, exist_ok=True)
        tg = await TelegramFake().start()
        bot = Bot(bot_env(tg, fm.base_url, tmp / "bot.sqlite3"), tmp, tmp / "bot.log")
        counters = Counters()
        try:
            counters.ready_s.append(await bot.start())
            chats = [Chat(CHAT_BASE + i, i) for i in range(args.chats)]
            give_up_at = time.monotonic() + args.spread_s + args.max_s
            stop = asyncio.Event()
            kill_task = asyncio.create_task(killer(bot, args.kills, counters, stop))

            async def staggered(chat: Chat) -> None:
                await asyncio.sleep(chat.index * args.spread_s / max(1, args.chats))
                await converse(tg, chat, args.latency_ms, give_up_at)

            await asyncio.gather(*(staggered(c) for c in chats))
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(kill_task, max(1.0, give_up_at - time.monotonic()))
            await asyncio.sleep(2.0)  # anything still in flight lands (or shows up as a duplicate)
            figures = await tally(tg, chats, counters.kill_times)
            log_tail = (tmp / "bot.log").read_text(errors="replace").splitlines()[-3:]
        finally:
            await bot.stop()
            await tg.close()
    durations = sorted(c.finished_at - c.asked_at for c in chats if c.finished_at and c.asked_at)
    ok = (figures["completed"] == args.chats and figures["lost"] == 0 and figures["dup_answers"] == 0
          and figures["dup_questions"] == 0 and counters.kills == args.kills)
    line: dict[str, Any] = {
        "bench": "crash_soak", "chats": args.chats, "kills": counters.kills, "restarts": counters.restarts,
        **figures,
        "model_latency_ms": args.latency_ms,
        "bot_ready_s_median": round(sorted(counters.ready_s)[len(counters.ready_s) // 2], 2) if counters.ready_s else None,
        "conversation_s_median": round(durations[len(durations) // 2], 2) if durations else None,
        "wall_s": round(time.monotonic() - started, 1),
        "seed": args.seed,
        "ok": ok,
    }
    if not figures["problems"]:
        del line["problems"]
    if not ok and log_tail:
        line["bot_log_tail"] = [ln[:200] for ln in log_tail]
    return line


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=100)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--latency-ms", type=int, default=150)
    parser.add_argument("--spread-s", type=float, default=30.0, help="requests are spread over this long")
    parser.add_argument("--max-s", type=float, default=90.0, help="give up this long after the last request")
    parser.add_argument("--keep", type=Path, help="keep the bot's database and log in this folder")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    guard_network()
    emit(asyncio.run(soak(args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
