"""Errors of the travel tools; all derive from tools.errors.ToolError (the root of `tools`).

    ToolError
     ├── ToolArgumentError
     │    ├── UnknownCityError     a city name matched nothing (name, suggestions)
     │    └── UnknownPlaceError    a place/station/POI matched nothing (name, city_id, suggestions)
     └── ProviderError             a live provider failed (provider, status_code, retryable)
"""

from __future__ import annotations

from tools.errors import ToolArgumentError


class UnknownCityError(ToolArgumentError):
    def __init__(self, name: str, suggestions: list[str], *, field: str | None = None, ambiguous: bool = False) -> None:
        if ambiguous:
            message = f"{name!r} matches several cities: {', '.join(suggestions)}; name one of them"
        elif suggestions:
            message = f"unknown city {name!r}; did you mean: {', '.join(suggestions)}?"
        else:
            message = f"unknown city {name!r}; use a full city name such as 北京, 上海 or Tokyo"
        super().__init__(message, field=field, suggestions=suggestions)
        self.name = name
        self.ambiguous = ambiguous


class UnknownPlaceError(ToolArgumentError):
    def __init__(self, name: str, suggestions: list[str], *, city_id: str | None = None, field: str | None = None) -> None:
        where = f" in {city_id}" if city_id else ""
        hint = f"; close matches: {', '.join(suggestions)}" if suggestions else "; try poi_search first"
        super().__init__(f"no place named {name!r}{where}{hint}", field=field, suggestions=suggestions)
        self.name = name
        self.city_id = city_id
