"""Median milliseconds per sandbox query, per tool, through the real tool objects. Prints ONE JSON line.

Budget (issue 3): each sandbox query <= 5 ms median.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools.base import ToolContext
from tools.collection import ToolCollection
from tools.travel import Gazetteer, SandboxProvider
from tools.travel.factory import build_sandbox_tools

CASES: list[tuple[str, str, list[dict[str, Any]]]] = [
    ("train_search", "train_search", [
        {"depart_station": a, "arrive_station": b, "depart_date": d}
        for a, b in [("北京", "上海"), ("广州", "武汉"), ("成都", "西安"), ("杭州", "厦门")]
        for d in ["2025-05-02", "2025-06-13"]
    ]),
    ("train_search_transfer", "train_search", [
        {"depart_station": a, "arrive_station": b, "depart_date": "2025-05-02", "is_transfer": 1}
        for a, b in [("北京", "乌鲁木齐"), ("上海", "拉萨"), ("哈尔滨", "昆明")]
    ]),
    ("flight_search", "flight_search", [
        {"departure_city_name": a, "arrival_city_name": b, "depart_date": d}
        for a, b in [("北京", "上海"), ("深圳", "成都"), ("上海", "东京"), ("北京", "巴黎")]
        for d in ["2025-05-02", "2025-06-13"]
    ]),
    ("flight_search_transfer", "flight_search", [
        {"departure_city_name": a, "arrival_city_name": b, "depart_date": "2025-05-02", "is_transfer": 1}
        for a, b in [("拉萨", "东京"), ("喀什", "上海")]
    ]),
    ("hotel_search", "hotel_search", [
        {"city_name": c, "checkin_date": "2025-05-02", "checkout_date": "2025-05-05", "landmark": lm}
        for c, lm in [("杭州", "西湖"), ("北京", "故宫"), ("上海", "外滩"), ("成都", "春熙路")]
    ]),
    ("poi_search", "poi_search", [{"query": q} for q in ["故宫", "万达广场", "上海外滩", "博物馆", "West Lake"]]),
    ("poi_around_search", "poi_around_search", [
        {"location": loc, "keyword": "餐厅", "radius": 1500} for loc in ["故宫", "外滩", "西湖", "宽窄巷子"]
    ]),
    ("route_plan", "route_plan", [
        {"origin": o, "destination": d, "city": c}
        for o, d, c in [("北京南站", "故宫", "北京"), ("PVG", "外滩", "上海"), ("西湖", "灵隐寺", "杭州")]
    ]),
    ("web_search", "web_search", [{"query": q} for q in ["高铁 退票", "故宫 预约", "visa china"]]),
    ("current_location", "current_location", [{}]),
]


async def main() -> dict[str, Any]:
    t0 = time.perf_counter()
    gaz = Gazetteer.load()
    sandbox = SandboxProvider(gaz)
    startup_ms = (time.perf_counter() - t0) * 1000
    tools = ToolCollection(build_sandbox_tools(gaz, sandbox))
    ctx = ToolContext("bench", datetime(2025, 4, 20, 9, 0, tzinfo=ZoneInfo("Asia/Shanghai")))
    medians: dict[str, float] = {}
    for label, name, arg_list in CASES:
        for args in arg_list:  # warm-up: first-use costs (zoneinfo, schedule memo) are not per query
            await tools.execute(name, args, ctx)
        samples = []
        for _ in range(15):
            for args in arg_list:
                start = time.perf_counter()
                result = await tools.execute(name, args, ctx)
                samples.append((time.perf_counter() - start) * 1000)
                assert result.ok, (name, args, result.error)
        medians[label] = round(statistics.median(samples), 3)
    return {
        "bench": "sandbox_query_ms_median",
        "budget_ms": 5.0,
        "ok": all(v <= 5.0 for v in medians.values()),
        "startup_ms": round(startup_ms, 1),
        "per_tool": medians,
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main()), ensure_ascii=False))
