"""WGS-84 <-> GCJ-02: Amap expects and returns GCJ-02 inside mainland China, our data is WGS-84."""

from __future__ import annotations

import math

_A = 6378245.0
_EE = 0.00669342162296594323


def _outside_china(lat: float, lon: float) -> bool:
    return not (73.66 < lon < 135.05 and 3.86 < lat < 53.55)


def _delta(lat: float, lon: float) -> tuple[float, float]:
    x, y = lon - 105.0, lat - 35.0
    dlat = -100.0 + 2.0 * x + 3.0 * y + 0.2 * y * y + 0.1 * x * y + 0.2 * math.sqrt(abs(x))
    dlat += (20.0 * math.sin(6.0 * x * math.pi) + 20.0 * math.sin(2.0 * x * math.pi)) * 2.0 / 3.0
    dlat += (20.0 * math.sin(y * math.pi) + 40.0 * math.sin(y / 3.0 * math.pi)) * 2.0 / 3.0
    dlat += (160.0 * math.sin(y / 12.0 * math.pi) + 320 * math.sin(y * math.pi / 30.0)) * 2.0 / 3.0
    dlon = 300.0 + x + 2.0 * y + 0.1 * x * x + 0.1 * x * y + 0.1 * math.sqrt(abs(x))
    dlon += (20.0 * math.sin(6.0 * x * math.pi) + 20.0 * math.sin(2.0 * x * math.pi)) * 2.0 / 3.0
    dlon += (20.0 * math.sin(x * math.pi) + 40.0 * math.sin(x / 3.0 * math.pi)) * 2.0 / 3.0
    dlon += (150.0 * math.sin(x / 12.0 * math.pi) + 300.0 * math.sin(x / 30.0 * math.pi)) * 2.0 / 3.0
    rad = lat / 180.0 * math.pi
    magic = 1 - _EE * math.sin(rad) ** 2
    sq = math.sqrt(magic)
    dlat = (dlat * 180.0) / ((_A * (1 - _EE)) / (magic * sq) * math.pi)
    dlon = (dlon * 180.0) / (_A / sq * math.cos(rad) * math.pi)
    return dlat, dlon


def to_gcj(lat: float, lon: float) -> tuple[float, float]:
    if _outside_china(lat, lon):
        return lat, lon
    dlat, dlon = _delta(lat, lon)
    return lat + dlat, lon + dlon


def from_gcj(lat: float, lon: float) -> tuple[float, float]:
    """Inverse by one correction step (about a metre off, enough for travel planning)."""
    if _outside_china(lat, lon):
        return lat, lon
    dlat, dlon = _delta(lat, lon)
    return round(lat - dlat, 6), round(lon - dlon, 6)


def amap_location(lat: float, lon: float) -> str:
    """Amap's "lng,lat" with six decimals, in GCJ-02."""
    glat, glon = to_gcj(lat, lon)
    return f"{glon:.6f},{glat:.6f}"
