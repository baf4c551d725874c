"""`tripbot check --live`: one real query to each configured travel provider, printed (here
against the local fakes, answering with captured bodies)."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.settings import Settings
from tests.fakes.live_providers import (
    AMAP_KEY,
    DUFFEL_TOKEN,
    FakeLiveServices,
    duffel_example,
    fixture,
)
from tripbot.check import checks_for, run_checks


@pytest.fixture
async def fake() -> AsyncIterator[FakeLiveServices]:
    async with FakeLiveServices() as f:
        yield f


def settings(fake: FakeLiveServices, tmp_path: Path, **extra: str) -> Settings:
    env = {"BOT_TRAVEL_DATA": "live", "AMAP_KEY": AMAP_KEY, "DUFFEL_TOKEN": DUFFEL_TOKEN,
           "SEARXNG_URL": fake.searxng_url, "BOT_DB_PATH": str(tmp_path / "bot.sqlite3"), "BOT_PORT": "0",
           **{f"{k.upper()}_BASE_URL": v for k, v in
              {"amap": fake.endpoints().amap, "rail12306": fake.endpoints().rail12306,
               "duffel": fake.endpoints().duffel}.items()}, **extra}
    return Settings(_env_file=None, **env)  # type: ignore[arg-type,call-arg]


def tomorrow() -> str:
    return (datetime.now(ZoneInfo("Asia/Shanghai")).date() + timedelta(days=1)).isoformat()


async def test_live_check_prints_what_each_provider_answered(fake: FakeLiveServices, tmp_path: Path) -> None:
    body = fixture("12306/left_ticket_BJP_TYV_2022-10-28.json")  # a real answer, served for tomorrow's query
    fake.rail_bodies[(tomorrow(), "BJP", "SHH")] = json.dumps(body, ensure_ascii=False)
    day = (datetime.now(ZoneInfo("Asia/Shanghai")).date() + timedelta(days=21)).isoformat()
    fake.duffel_answers["PEK-SHA"] = duffel_example(more_offers=True)
    out = io.StringIO()
    code = await run_checks(settings(fake, tmp_path), out, live=True)
    text = out.getvalue()
    assert code == 0, text
    assert "amap: ok: poi_search 天安门 in 北京: 故宫博物院" in text
    assert "searxng: ok: web_search via searxng: 2 results, first: 参观须知 - 故宫博物院 <https://www.dpm.org.cn/Visit.html>" in text
    assert f"duffel: ok: flight_search PEK->SHA {day}: 2 flights, cheapest BA1234 16:38 441.00 CNY (45.00 GBP = 441.00 CNY" in text
    assert "caveat: 1 Duffel offer(s) came without a usable price" in text
    assert f"12306: ok: train_search 北京->上海 {tomorrow()}: 8 trains, first G623 08:13->11:21; query path leftTicket/queryT" in text
    queries = [r for r in fake.requests if r[0] == "amap"]
    assert len(queries) == 1 and queries[0][2] == "/amap/v3/place/text"  # one real call each


async def test_live_check_failures_name_the_setting(fake: FakeLiveServices, tmp_path: Path) -> None:
    fake.mode["searxng"] = "engines_failed"
    fake.mode["12306"] = "loop"
    out = io.StringIO()
    code = await run_checks(settings(fake, tmp_path, AMAP_KEY="wrong"), out, live=True)
    text = out.getvalue()
    assert code == 1 and "3 check(s) failed" in text
    assert "amap: FAILED: Amap (高德地图): the AMAP_KEY is invalid" in text and "(check AMAP_KEY / AMAP_BASE_URL" in text
    assert "searxng: FAILED: the SearXNG search instance found nothing because its search engines failed" in text
    assert "12306: FAILED: 12306 (China Railway) kept sending the query around in a loop" in text


def test_without_live_the_check_only_reaches_the_base_urls(fake: FakeLiveServices, tmp_path: Path) -> None:
    names = [(n, c.__name__) for n, c in checks_for(settings(fake, tmp_path))[3:]]
    assert names == [("amap", "amap"), ("searxng", "searxng"), ("duffel", "duffel"), ("12306", "12306")]
    live = [c.__name__ for _, c in checks_for(settings(fake, tmp_path), live=True)[3:]]
    assert live == ["live_amap", "live_searxng", "live_duffel", "live_12306"]
