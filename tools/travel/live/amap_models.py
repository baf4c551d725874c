"""Amap Web Service v3 answers (place/text, place/around, direction/*) as pydantic models.

Amap writes an empty value as [] instead of "", so every text field accepts a list too.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field


def _text(v: Any) -> str:
    if isinstance(v, list):
        return ";".join(str(x) for x in v)
    return "" if v is None else str(v)


Text = Annotated[str, BeforeValidator(_text)]

# infocode -> (what it means for the model, retryable). From Amap's published error-code table.
ERRORS: dict[str, tuple[str, bool]] = {
    "10001": ("the AMAP_KEY is invalid (INVALID_USER_KEY); the operator must fix the key", False),
    "10002": ("the AMAP_KEY may not use this service (SERVICE_NOT_AVAILABLE)", False),
    "10003": ("today's Amap request quota is used up (DAILY_QUERY_OVER_LIMIT); use other tools until tomorrow", False),
    "10004": ("Amap is being called too often (ACCESS_TOO_FREQUENT); wait a minute and try again", True),
    "10005": ("this server's IP is not on the key's allowlist (INVALID_USER_IP)", False),
    "10009": ("the AMAP_KEY is for another platform, not the Web Service API (USERKEY_PLAT_NOMATCH)", False),
    "10012": ("the AMAP_KEY lacks the permission for this service (INSUFFICIENT_PRIVILEGES)", False),
    "10013": ("the AMAP_KEY was deleted (USER_KEY_RECYCLED)", False),
    "10014": ("Amap's cloud is over its request limit (QPS_HAS_EXCEEDED_THE_LIMIT); try again shortly", True),
    "10019": ("Amap's per-service request limit is reached (CQPS_HAS_EXCEEDED_THE_LIMIT); try again shortly", True),
    "10020": ("the key's per-service request limit is reached (CKQPS_HAS_EXCEEDED_THE_LIMIT); try again shortly", True),
    "10021": ("the key's requests per second are over the limit (CUQPS_HAS_EXCEEDED_THE_LIMIT); wait a second and try again", True),
    "10044": ("the account's daily Amap quota is used up (USER_DAILY_QUERY_OVER_LIMIT); use other tools until tomorrow", False),
    "20000": ("Amap rejected the request parameters (INVALID_PARAMS); rephrase the place names", False),
    "20001": ("a required parameter was missing (MISSING_REQUIRED_PARAMS)", False),
    "20003": ("Amap had an unknown error (UNKNOWN_ERROR); try again", True),
    "20800": ("the points are outside Amap's service area (OUT_OF_SERVICE)", False),
    "20801": ("no road near the start or end point (NO_ROADS_NEARBY); pick a nearby landmark instead", False),
    "20802": ("Amap could not plan this route (ROUTE_FAIL); try other end points", False),
    "20803": ("the two points are too far apart for this kind of route (OVER_DIRECTION_RANGE)", False),
}


class Envelope(BaseModel):
    status: Text
    info: Text = ""
    infocode: Text = ""


class BizExt(BaseModel):
    rating: Text = ""
    cost: Text = ""
    opentime2: Text = ""
    open_time: Text = ""


class Poi(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: Text
    name: Text
    type: Text = ""
    typecode: Text = ""
    address: Text = ""
    location: Text
    cityname: Text = ""
    adname: Text = ""
    distance: Text = ""
    biz_ext: BizExt | list[Any] | None = None


class PlaceAnswer(Envelope):
    count: Text = "0"
    pois: list[Poi] = Field(default_factory=list)


class DrivePath(BaseModel):
    distance: Text
    duration: Text
    tolls: Text = "0"
    strategy: Text = ""


class DriveRoute(BaseModel):
    taxi_cost: Text = ""
    paths: list[DrivePath] = Field(default_factory=list)


class DriveAnswer(Envelope):
    route: DriveRoute | list[Any] = Field(default_factory=list)


class BusLine(BaseModel):
    name: Text = ""
    distance: Text = ""


class Bus(BaseModel):
    buslines: list[BusLine] = Field(default_factory=list)


class Segment(BaseModel):
    bus: Bus | list[Any] = Field(default_factory=list)


class Transit(BaseModel):
    cost: Text = ""
    duration: Text
    distance: Text = ""
    walking_distance: Text = "0"
    nightflag: Text = "0"
    segments: list[Segment] = Field(default_factory=list)


class TransitRoute(BaseModel):
    distance: Text = ""
    taxi_cost: Text = ""
    transits: list[Transit] = Field(default_factory=list)


class TransitAnswer(Envelope):
    route: TransitRoute | list[Any] = Field(default_factory=list)


class WalkPath(BaseModel):
    distance: Text
    duration: Text


class WalkRoute(BaseModel):
    paths: list[WalkPath] = Field(default_factory=list)


class WalkAnswer(Envelope):
    route: WalkRoute | list[Any] = Field(default_factory=list)
