"""Travel data: the built-in sandbox or live services, their keys and addresses, exchange rates."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from bot.settings.fields import SettingsGroup, alias, http_url


class TravelSettings(SettingsGroup):
    section = "Travel data"

    travel_data: Literal["sandbox", "live"] = Field(
        default="sandbox", validation_alias=alias("BOT_TRAVEL_DATA"),
        description=(
            "`sandbox`: the built-in offline data (real geography, synthetic schedules). `live`: real "
            "services where a key is set below, the sandbox for the rest."
        ),
    )
    fx_rates: str | None = Field(
        default=None, validation_alias=alias("BOT_FX_RATES"),
        description=(
            "Exchange rates into CNY and the date they are from, e.g. `USD=7.17,GBP=9.80@2025-06-30`: "
            "fares quoted in another currency (Duffel) are converted with them for filters and totals, "
            "and the plan says which rates it used. Unset: built-in approximate rates, said as such."
        ),
    )
    # live travel data providers (BOT_TRAVEL_DATA=live)
    amap_key: str | None = Field(
        default=None, validation_alias=alias("AMAP_KEY"),
        description=(
            "Amap (高德) **Web Service** key, with `BOT_TRAVEL_DATA=live`: places and routes in "
            "mainland China, Hong Kong and Macau."
        ),
    )
    searxng_url: str | None = Field(
        default=None, validation_alias=alias("SEARXNG_URL"),
        description=(
            "A SearXNG instance with `json` in `search.formats`, for `web_search` with live data; "
            "wins over Tavily."
        ),
    )
    tavily_api_key: str | None = Field(
        default=None, validation_alias=alias("TAVILY_API_KEY"),
        description="Tavily's key, for `web_search` with live data when no SearXNG is set.",
    )
    duffel_token: str | None = Field(
        default=None, validation_alias=alias("DUFFEL_TOKEN"),
        description="Duffel's access token, for `flight_search` with live data.",
    )
    # base URLs of the live services (tests and self-hosted proxies point them elsewhere)
    amap_base_url: str | None = Field(
        default=None, validation_alias=alias("AMAP_BASE_URL"),
        description="Amap's base URL (a proxy, or the tests' fake); unset: the real service.",
    )
    tavily_base_url: str | None = Field(
        default=None, validation_alias=alias("TAVILY_BASE_URL"),
        description="Tavily's base URL; unset: the real service.",
    )
    rail12306_base_url: str | None = Field(
        default=None, validation_alias=alias("RAIL12306_BASE_URL"),
        description=(
            "Base URL of 12306's public left-ticket query (trains need no key, so live mode always "
            "asks it); unset: the real service."
        ),
    )
    duffel_base_url: str | None = Field(
        default=None, validation_alias=alias("DUFFEL_BASE_URL"),
        description="Duffel's base URL; unset: the real service.",
    )

    @field_validator("searxng_url", "amap_base_url", "tavily_base_url", "rail12306_base_url", "duffel_base_url", mode="before")
    @classmethod
    def _travel_urls(cls, v: object, info: ValidationInfo) -> object:
        return http_url(cls, v, info)

    @field_validator("fx_rates")
    @classmethod
    def _rates(cls, v: str | None) -> str | None:
        from tools.travel.money import Rates, RatesError

        if v:
            try:
                Rates.parse(v)
            except RatesError as exc:
                raise ValueError(exc.message) from None
        return v
