"""The gazetteer: coverage of the data, name resolution, close matches, places."""

from __future__ import annotations

import pytest

from tools.errors import ToolArgumentError
from tools.travel.errors import UnknownCityError, UnknownPlaceError
from tools.travel.geo import Gazetteer

CAPITALS = ["北京", "天津", "上海", "重庆", "石家庄", "太原", "呼和浩特", "沈阳", "长春", "哈尔滨", "南京", "杭州",
            "合肥", "福州", "南昌", "济南", "郑州", "武汉", "长沙", "广州", "南宁", "海口", "成都", "贵阳", "昆明",
            "拉萨", "西安", "兰州", "西宁", "银川", "乌鲁木齐", "台北", "香港", "澳门"]


@pytest.fixture(scope="module")
def gaz() -> Gazetteer:
    return Gazetteer.load()


def test_coverage(gaz: Gazetteer) -> None:
    china = [c for c in gaz.cities if c.country_code in ("CN", "HK", "MO", "TW")]
    world = [c for c in gaz.cities if c not in china]
    assert len(china) >= 60 and len(world) >= 40
    names = {c.name_zh for c in china}
    assert set(CAPITALS) <= names
    for c in gaz.cities:
        assert -90 <= c.lat <= 90 and -180 <= c.lon <= 180 and c.tz and c.name_en and c.pinyin
    major = ["北京", "上海", "广州", "深圳", "杭州", "成都", "西安", "南京", "重庆", "苏州", "厦门", "武汉",
             "东京", "巴黎", "伦敦", "纽约"]
    for name in major:
        pois = gaz.pois_in(name)
        assert len(pois) >= 10, name
        for p in pois:
            assert p.hours and p.visit_min > 0 and p.price >= 0 and p.category
    assert {s.name for s in gaz.find_stations("北京")} >= {"北京", "北京南", "北京西"}
    assert [a.iata for a in gaz.find_airports("上海")] == ["PVG", "SHA"]


@pytest.mark.parametrize("name", ["北京", "北京市", "Beijing", "beijing", "BEIJING ", "北京南", "北京南站", "PEK", "Bei Jing"])
def test_resolve_beijing(gaz: Gazetteer, name: str) -> None:
    assert gaz.resolve_city(name).id == "beijing"


@pytest.mark.parametrize(("name", "city"), [("Xi'an", "西安"), ("xian", "西安"), ("Ürümqi", "乌鲁木齐"), ("上海虹桥", "上海"),
                                            ("东京", "东京"), ("Tokyo", "东京"), ("New York", "纽约"), ("香港特别行政区", "香港"),
                                            ("chongqing", "重庆"), ("虎门", "东莞")])
def test_resolve_other_names(gaz: Gazetteer, name: str, city: str) -> None:
    assert gaz.resolve_city(name).name_zh == city


def test_unknown_city_lists_close_matches(gaz: Gazetteer) -> None:
    with pytest.raises(UnknownCityError) as err:
        gaz.resolve_city("北惊")  # same pinyin as 北京
    assert "北京 (Beijing)" in err.value.suggestions
    assert isinstance(err.value, ToolArgumentError) and "北京" in err.value.message
    with pytest.raises(UnknownCityError) as err:
        gaz.resolve_city("Shangai")
    assert err.value.suggestions[0].startswith("上海")
    with pytest.raises(UnknownCityError) as err:
        gaz.resolve_city("chengdou")
    assert err.value.suggestions[0].startswith("成都")
    with pytest.raises(UnknownCityError):
        gaz.resolve_city("   ")


def test_station_versus_city(gaz: Gazetteer) -> None:
    assert gaz.resolve_station("北京") is None  # a city name means all its stations
    station = gaz.resolve_station("北京站")
    assert station is not None and station.name == "北京"
    station = gaz.resolve_station("上海虹桥站")
    assert station is not None and station.city_id == "shanghai"


def test_find_places(gaz: Gazetteer) -> None:
    wanda = gaz.find_places("北京", "万达广场")
    assert len(wanda) == 3 and all("万达广场" in p.name_zh for p in wanda)
    assert gaz.find_places(None, "上海外滩")[0].name_zh == "外滩"
    assert gaz.find_places("西安", "Terracotta")[0].name_zh.startswith("秦始皇兵马俑")
    museums = gaz.find_places("成都", "博物馆")
    assert museums and all("博物馆" in (p.name_zh + p.category) for p in museums)
    assert gaz.find_places("北京", "完全不存在的地方xyz") == []


def test_resolve_place(gaz: Gazetteer) -> None:
    sh = gaz.resolve_city("上海")
    assert gaz.resolve_place("外滩", sh).id == "POI-shanghai-01"
    assert gaz.resolve_place("上海虹桥站", sh).kind == "station"
    assert gaz.resolve_place("PVG", sh).kind == "airport"
    point = gaz.resolve_place("31.23,121.47")
    assert point.kind == "point" and point.city_id == "shanghai"
    with pytest.raises(UnknownPlaceError):
        gaz.resolve_place("qqqqqq", sh)


def test_nearest_city(gaz: Gazetteer) -> None:
    city, km = gaz.nearest_city(31.2, 121.5)
    assert city.name_zh == "上海" and km < 20
