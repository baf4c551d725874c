"""train_search's station and city resolution on the live path, checked against the official
station table (tools/travel/data/rail_stations.json, 3,364 stations): every station of a city the
map knows is found, by its name, and in that city."""

from __future__ import annotations

import pytest

from tools.travel import Gazetteer
from tools.travel.errors import UnknownCityError
from tools.travel.live.telecodes import RailStation, StationTable
from tools.travel.trains import TrainSearch


@pytest.fixture(scope="module")
def table() -> StationTable:
    return StationTable.load()


@pytest.fixture(scope="module")
def tool(table: StationTable) -> TrainSearch:
    return TrainSearch(Gazetteer.load(), provider=None, stations=table)  # type: ignore[arg-type]  # resolution only


def in_known_cities(table: StationTable, gaz: Gazetteer) -> list[tuple[RailStation, str]]:
    out = []
    for s in table:
        try:
            out.append((s, gaz.resolve_city(s.city).id))
        except UnknownCityError:
            continue
    return out


def test_every_station_of_a_known_city_resolves_to_it(table: StationTable, tool: TrainSearch) -> None:
    gaz = Gazetteer.load()
    stations = in_known_cities(table, gaz)
    assert len(stations) > 1000  # 1,106 of the 3,364 with the 2026-04-15 table
    whole_city: list[str] = []
    wrong: list[tuple[str, object]] = []
    for s, city_id in stations:
        city, names, named = tool._endpoint(s.name, "depart_station")
        if city.id != city_id:
            wrong.append((s.name, city.id))
        elif not named:
            whole_city.append(s.name)  # named like its city (保定, 常州): asking for it asks for the city
        elif names != (s.name,):
            wrong.append((s.name, names))
    assert wrong == []
    assert all(n == table.by_name(n).city for n in whole_city)  # type: ignore[union-attr]  # only those
    assert {"保定", "常州", "北京"} <= set(whole_city) and "北京丰台" not in whole_city


@pytest.mark.parametrize(("name", "station", "city"), [
    ("北京丰台", "北京丰台", "beijing"), ("北京丰台站", "北京丰台", "beijing"), ("Beijing Fengtai", "北京丰台", "beijing"),
    ("beijingfengtai", "北京丰台", "beijing"), ("Baoding East", "保定东", "baoding"), ("高碑店东", "高碑店东", "baoding"),
    ("Beijing West Railway Station", "北京西", "beijing"), ("Xi'an North", "西安北", "xian"),
    ("珠海机场", "珠海机场", "zhuhai"),
])
def test_names_a_traveller_or_a_model_writes(tool: TrainSearch, name: str, station: str, city: str) -> None:
    found, names, named = tool._endpoint(name, "depart_station")
    assert (found.id, names) == (city, (station,)) and named


def test_a_station_in_a_city_the_map_lacks_is_still_unknown(tool: TrainSearch, table: StationTable) -> None:
    assert table.find("衢州") is not None
    with pytest.raises(UnknownCityError):
        tool._endpoint("衢州", "depart_station")
