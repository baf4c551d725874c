"""12306 on answers it really gave (tests/fixtures/providers/12306/, see SOURCES.md there):
every train of an answer shown, trains not on sale yet kept with their sale time, the sale
window known before asking, c_url and redirects followed and remembered, the official station
table, and every refusal a clear tool error."""

# ruff: noqa: F811  (the fixtures imported from tests.live_support are named again as parameters)
from __future__ import annotations

import json
from datetime import date
from typing import Any

import httpx
import pytest

from tests.fakes.live_providers import FakeLiveServices, fixture, fixture_text, recording
from tests.live_support import Build, at, build, fails, fake, http, ok, world  # noqa: F401 (pytest fixtures)
from tools.errors import ProviderError
from tools.travel.live import Rail12306
from tools.travel.live.rail_parse import parse_row
from tools.travel.live.telecodes import RailStation, StationTable
from tools.travel.models import Train
from tools.travel.provider import TrainQuery

BJ_TY = "left_ticket_BJP_TYV_2022-10-28.json"
SH_CZ = "left_ticket_SHH_CZH_2024-04-22.json"
NOW_2022 = at("2022-10-27 09:00")


def serve(fake: FakeLiveServices, day: str, a: str, b: str, name: str) -> dict[str, Any]:
    text = fixture_text(f"12306/{name}")
    fake.rail_bodies[(day, a, b)] = text
    return json.loads(text)


def before_sale(row: str, button: str) -> str:
    """The same row as 12306 shows it before its sale opens: the button text says when
    ("12点45分起售"), the can-buy flag is IS_TIME_NOT_BUY and every seat count is "*" (the form
    clients document for such rows; no public capture of a whole not-yet-on-sale answer exists)."""
    f = row.split("|")
    f[1], f[11] = button, "IS_TIME_NOT_BUY"
    for i in range(20, 34):
        if f[i]:
            f[i] = "*"
    return "|".join(f)


def real_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = fixture("12306/rows_2024-2026.json")["rows"]
    return rows


def train_of(r: dict[str, Any], table: StationTable) -> Train:
    """The train of a captured row (each of them ran that day)."""
    parsed = parse_row(r["row"], date.fromisoformat(r["query"].split()[1]), {}, table)
    assert isinstance(parsed, Train), parsed
    return parsed


# ------------------------------------------------------------------------------------ the answer, whole

async def test_every_train_of_the_answer_is_shown(build: Build, fake: FakeLiveServices) -> None:
    """Beijing -> Taiyuan: six of the eight trains leave from 北京丰台, which the old table lacked."""
    answer = serve(fake, "2022-10-28", "BJP", "TYV", BJ_TY)
    out = await ok(build(NOW_2022), "train_search", {"depart_station": "北京", "arrive_station": "太原",
                                                     "depart_date": "2022-10-28"}, NOW_2022)
    assert out["source"] == "12306" and out["matched"] == len(answer["data"]["result"]) == 8
    assert [t["number"] for t in out["results"]] == ["G623", "G605", "G607", "T41", "G627", "G629", "G613", "Z277"]
    assert sum(t["from_station"] == "北京丰台" for t in out["results"]) == 6
    g623 = out["results"][0]
    assert (g623["from_station"], g623["to_station"], g623["from_city"], g623["to_city"]) == ("北京丰台", "太原南", "北京", "太原")
    assert {s["seat"]: (s["price"], s["left"], s["currency"]) for s in g623["seats"]} == {
        "二等座": (210.5, 20, "CNY"), "一等座": (337.0, 8, "CNY"), "商务座": (689.0, 0, "CNY")}
    z277 = out["results"][-1]
    assert (z277["depart"], z277["arrive"]) == ("2022-10-28 20:03", "2022-10-29 00:28")  # overnight
    assert {s["seat"]: s["left"] for s in z277["seats"]}["无座"] == 0 and "高级软卧" in {s["seat"] for s in z277["seats"]}
    (*_, query), = [r for r in fake.requests if r[2].endswith(fake.rail_path)]
    assert query["leftTicketDTO.from_station"] == "BJP" and query["leftTicketDTO.to_station"] == "TYV"  # as the capture


async def test_a_named_station_keeps_only_its_trains(build: Build, fake: FakeLiveServices) -> None:
    serve(fake, "2022-10-28", "BJP", "TYV", BJ_TY)
    out = await ok(build(NOW_2022), "train_search", {"depart_station": "北京西", "arrive_station": "太原",
                                                     "depart_date": "2022-10-28"}, NOW_2022)
    assert [t["number"] for t in out["results"]] == ["T41", "Z277"]
    serve(fake, "2024-04-22", "SHH", "CZH", SH_CZ)  # the request of the capture
    now = at("2024-04-22 08:00")
    out = await ok(build(now), "train_search", {"depart_station": "上海虹桥", "arrive_station": "常州",
                                                "depart_date": "2024-04-22"}, now)
    assert [(t["number"], t["from_station"]) for t in out["results"]] == [("D3010", "上海虹桥")]  # G8294 leaves 上海


async def test_a_station_missing_from_the_table_is_shown_by_its_code(fake: FakeLiveServices, http: httpx.AsyncClient,
                                                                     world: Any) -> None:
    gaz, _ = world
    full = StationTable.load()
    without_fengtai = StationTable(s for s in (full.by_code(c) for c in ("BJP", "BXP", "TYV", "TNV")) if s)
    body = fixture(f"12306/{BJ_TY}")
    del body["data"]["map"]["FTP"]
    fake.rail_bodies[("2022-10-28", "BJP", "TYV")] = json.dumps(body, ensure_ascii=False)
    rail = Rail12306(http, gaz, stations=without_fengtai, base_url=fake.endpoints().rail12306, clock=lambda: NOW_2022)
    q = TrainQuery(gaz.resolve_city("北京"), gaz.resolve_city("太原"), date(2022, 10, 28), ("北京",), ("太原",))
    found = await rail.trains(q)
    assert len(found.items) == 8 and sum(t.from_station == "FTP" for t in found.items) == 6
    assert "FTP" in (found.items[0].note or "") and any("FTP" in c for c in found.caveats)


def test_the_official_station_table() -> None:
    table = StationTable.load()
    assert len(table) == 3364  # the 2026-04-15 station_name.js
    assert table.by_code("FTP") == RailStation("北京丰台", "FTP", "beijingfengtai", "bjft", "北京")
    assert {s.name for s in table.in_city("保定")} >= {"保定", "保定东", "高碑店东", "定州东"}
    assert table.code("扬州东站") == "YDU" and table.code("香港西九龙") == "XJA"


# ------------------------------------------------------------------------------------ row quirks

@pytest.mark.parametrize("index", range(8))
def test_real_rows_of_2024_to_2026_parse(index: int) -> None:
    r = real_rows()[index]
    train = train_of(r, StationTable.load())
    assert r["fields"] in (57, 58)
    assert train.number in r["row"] and train.seats and all(s.price > 0 for s in train.seats)


def test_row_quirks_overnight_sleepers_standing_and_premium_seats() -> None:
    table = StationTable.load()
    d5, g3, z293, k519, g103, g1, g105, g531 = (train_of(r, table) for r in real_rows())
    assert (d5.depart, d5.arrive, d5.duration_min) == ("2024-02-09 21:21", "2024-02-10 09:27", 726)  # overnight
    assert {s.seat: s.price for s in d5.seats} == {"一等卧": 686.0, "二等卧": 542.0, "二等座": 361.0, "无座": 361.0}
    assert {s.seat: s.left for s in z293.seats} == {"硬卧": 0, "软卧": 0, "软座": 0, "硬座": 0, "无座": 0}  # all "无"
    assert {s.seat: s.left for s in k519.seats}["硬座"] == 11
    assert {s.seat: (s.price, s.left) for s in g1.seats}["优选一等座"] == (1471.0, 4)
    assert (g3.from_station, g103.to_station, g105.to_station, g531.from_station) == ("北京南", "上海虹桥", "上海虹桥", "北京南")
    assert all(t.sale_opens is None for t in (d5, g3, z293, k519, g103, g1, g105, g531))  # all were on sale


def test_a_row_in_an_unknown_layout_is_a_clear_error() -> None:
    with pytest.raises(ProviderError, match="unknown layout"):
        parse_row("a|b|c", date(2025, 5, 1), {}, StationTable.load())


# ------------------------------------------------------------------------------------ not on sale yet

async def test_trains_not_on_sale_yet_are_kept_with_their_sale_time(build: Build, fake: FakeLiveServices) -> None:
    g531 = real_rows()[7]["row"]  # 2026-08-10, its stamp says sales open 2026-07-27 12:45
    body = {"httpstatus": 200, "data": {"result": [before_sale(g531, "12点45分起售")], "flag": "1",
                                        "map": {"VNP": "北京南", "AOH": "上海虹桥"}}, "messages": "", "status": True}
    fake.rail_bodies[("2026-08-10", "BJP", "SHH")] = json.dumps(body, ensure_ascii=False)
    now = at("2026-07-27 09:00")
    args = {"depart_station": "北京", "arrive_station": "上海", "depart_date": "2026-08-10", "seat_name": "二等座"}
    out = await ok(build(now), "train_search", args, now)
    (t,) = out["results"]
    assert t["number"] == "G531" and t["sale_opens"] == "2026-07-27 12:45" and "not on sale yet" in t["note"]
    assert {s["seat"]: (s["price"], s["left"]) for s in t["seats"]}["二等座"] == (626.0, 0)
    assert any("1 of 1 trains on 2026-08-10 are not on sale yet" in c for c in out["caveats"])
    assert "hint" not in out


async def test_sale_time_from_the_button_when_the_row_has_no_stamp(fake: FakeLiveServices, http: httpx.AsyncClient,
                                                                   world: Any) -> None:
    gaz, _ = world
    body = fixture(f"12306/{BJ_TY}")
    body["data"]["result"] = [before_sale(r, "12点30分起售") for r in body["data"]["result"][:2]] + body["data"]["result"][2:]
    fake.rail_bodies[("2022-10-28", "BJP", "TYV")] = json.dumps(body, ensure_ascii=False)
    rail = Rail12306(http, gaz, base_url=fake.endpoints().rail12306, clock=lambda: at("2022-10-14 09:00"))
    q = TrainQuery(gaz.resolve_city("北京"), gaz.resolve_city("太原"), date(2022, 10, 28), ("北京",), ("太原",))
    found = await rail.trains(q)
    assert [t.sale_opens for t in found.items[:3]] == ["2022-10-14 12:30", "2022-10-14 12:30", None]
    assert found.items[0].cheapest("二等座") == 210.5  # a fare to plan with, not "sold out"
    assert found.caveats[0].startswith("2 of 8 trains on 2022-10-28 are not on sale yet")


async def test_a_date_past_the_sale_window_is_answered_before_asking(build: Build, fake: FakeLiveServices) -> None:
    out = await ok(build(NOW_2022), "train_search", {"depart_station": "北京", "arrive_station": "太原",
                                                     "depart_date": "2022-11-20"}, NOW_2022)
    assert out["results"] == [] and out["not_on_sale_until"] == "2022-11-06" and "hint" not in out
    assert "go on sale on 2022-11-06" in out["note"] and "not an error" in out["note"]
    assert out["caveats"] == ["trains on 2022-11-20 are not on sale until 2022-11-06 (12306 sells 15 days ahead); "
                              "no live train times or seats for that date"]
    assert fake.count("12306") == 0
    last = await ok(build(NOW_2022), "train_search", {"depart_station": "北京", "arrive_station": "太原",
                                                      "depart_date": "2022-11-10"}, NOW_2022)
    assert "not_on_sale_until" not in last and fake.count("12306") > 0  # the 15th day is still on sale


# ------------------------------------------------------------------------------------ paths and redirects

@pytest.mark.parametrize("mode", ["ok", "c_url_302"])
async def test_c_url_is_followed_once_and_remembered(fake: FakeLiveServices, http: httpx.AsyncClient, world: Any,
                                                     mode: str) -> None:
    gaz, _ = world
    fake.mode["12306"] = mode
    serve(fake, "2022-10-28", "BJP", "TYV", BJ_TY)
    rail = Rail12306(http, gaz, base_url=fake.endpoints().rail12306, clock=lambda: NOW_2022)
    q = TrainQuery(gaz.resolve_city("北京"), gaz.resolve_city("太原"), date(2022, 10, 28), ("北京",), ("太原",))
    assert len((await rail.trains(q)).items) == 8
    assert rail.query_path == "leftTicket/queryT"  # from the real c_url answer
    first = [r[2] for r in fake.requests if "/leftTicket/query" in r[2]]
    assert first == ["/12306/otn/leftTicket/query", "/12306/otn/leftTicket/queryT"]
    await rail.trains(q)
    after = [r[2] for r in fake.requests if "/leftTicket/query" in r[2]][2:]
    assert after == ["/12306/otn/leftTicket/queryT"]  # one request per search from now on


@pytest.mark.parametrize(("mode", "words", "retryable"), [
    ("loop", "loop", False),
    ("error_page", "redirect to /mormhweb/logFiles/error.html", True),
    ("html", "turned the query away", True),
    ("auth", "turned the query away", True),
    ("rate", "HTTP 429", True),
    ("refused", "选择的查询日期不在预售日期范围内; tickets for 2022-10-28 go on sale on 2022-10-14", False),
    ("illegal", "非法请求", False),
    ("500", "HTTP 500", True),
    ("malformed", "not JSON", True),
    ("shape", "unexpected shape", False),
])
async def test_12306_refusals_are_clear(build: Build, fake: FakeLiveServices, http: httpx.AsyncClient, world: Any,
                                        mode: str, words: str, retryable: bool) -> None:
    fake.mode["12306"] = mode
    serve(fake, "2022-10-28", "BJP", "TYV", BJ_TY)
    message = await fails(build(NOW_2022), "train_search", {"depart_station": "北京", "arrive_station": "太原",
                                                            "depart_date": "2022-10-28"}, NOW_2022)
    assert words in message and "12306" in message
    gaz = world[0]
    rail = Rail12306(http, gaz, base_url=fake.endpoints().rail12306, clock=lambda: NOW_2022)
    q = TrainQuery(gaz.resolve_city("北京"), gaz.resolve_city("太原"), date(2022, 10, 28), ("北京",), ("太原",))
    with pytest.raises(ProviderError) as info:
        await rail.trains(q)
    assert info.value.provider == "12306" and info.value.retryable is retryable


async def test_a_failing_12306_leaves_the_other_tools_working(build: Build, fake: FakeLiveServices) -> None:
    fake.mode["12306"] = "loop"
    tools = build(NOW_2022)
    assert "loop" in await fails(tools, "train_search", {"depart_station": "北京", "arrive_station": "太原",
                                                         "depart_date": "2022-10-28"}, NOW_2022)
    out = await ok(tools, "route_plan", {"origin": "故宫", "destination": "北京南站", "city": "北京"}, NOW_2022)
    assert out["source"] == "amap"


# ------------------------------------------------------------------------------------ transfers

async def test_transfers_pair_trains_through_a_named_city(build: Build, fake: FakeLiveServices) -> None:
    """The pairing logic, on the hand-written answers of tests/fakes/recordings (no public capture
    holds two connecting answers of one day)."""
    day = recording("rail12306_left_ticket.json")["2025-05-01"]
    fake.rail_bodies[("2025-05-01", "BJP", "NJH")] = json.dumps(day["BJP-NKH"], ensure_ascii=False)
    fake.rail_bodies[("2025-05-01", "NJH", "SHH")] = json.dumps(day["NKH-SHH"], ensure_ascii=False)
    now = at("2025-04-20 10:00")
    out = await ok(build(now), "train_search", {"depart_station": "北京", "arrive_station": "上海", "depart_date": "2025-05-01",
                                                "is_transfer": 1, "middle_station_name": "南京"}, now)
    assert [(t["id"], t["middle_station"], t["wait_min"]) for t in out["results"]] == [
        ("G1+G7012", "南京南", 28), ("G105+G7030", "南京南", 52)]
    assert out["results"][0]["total_min"] == 286


async def test_transfers_past_the_window_are_not_asked(build: Build, fake: FakeLiveServices) -> None:
    out = await ok(build(NOW_2022), "train_search", {"depart_station": "北京", "arrive_station": "上海",
                                                     "depart_date": "2022-12-01", "is_transfer": 1}, NOW_2022)
    assert out["results"] == [] and out["not_on_sale_until"] == "2022-11-17" and fake.count("12306") == 0


async def test_unreachable_12306_is_a_clear_error(world: Any, http: httpx.AsyncClient) -> None:
    gaz, _ = world
    rail = Rail12306(http, gaz, base_url="http://127.0.0.1:9", clock=lambda: NOW_2022)  # nothing listens there
    q = TrainQuery(gaz.resolve_city("北京"), gaz.resolve_city("上海"), date(2022, 10, 28), ("北京",), ("上海",))
    with pytest.raises(ProviderError, match="could not be reached") as info:
        await rail.trains(q)
    assert info.value.retryable
