"""Money across currencies: a rate table with its date, and conversions that say which rate they used.

Prices from the live providers come in the seller's currency (Duffel quotes GBP, AUD, ...); the
tools' filters (min/max_sale_price, max_price) and a plan's totals are in CNY. A `Rates` table
turns one into the other and every conversion carries the rate and the table's date, so the
answer can say "45.00 GBP = 441.00 CNY at 9.80 (rates of 2025-06-30)".

The table comes from the BOT_FX_RATES setting ("USD=7.17,GBP=9.80@2025-06-30"); the default
below is a set of approximate reference rates, stated as such wherever it is used.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from types import MappingProxyType

from tools.errors import ToolError

BASE = "CNY"
# CNY for one unit of each currency, approximate mid-2025 reference rates.
DEFAULT_RATES = ("USD=7.17,EUR=8.40,GBP=9.80,JPY=0.0497,HKD=0.913,MOP=0.887,TWD=0.245,KRW=0.00527,SGD=5.62,"
                 "AUD=4.70,NZD=4.35,CAD=5.25,CHF=9.00,THB=0.220,MYR=1.70,AED=1.95@2025-06-30")
DEFAULT_SOURCE = "approximate reference rates built into the bot (set BOT_FX_RATES for current ones)"


class RatesError(ToolError):
    """The rate table setting cannot be read."""


@dataclass(frozen=True, slots=True)
class Converted:
    amount: float  # in the target currency, rounded to 0.01
    currency: str
    original: float
    original_currency: str
    rate: float  # target units for one original unit
    as_of: date

    def quote(self) -> str:
        """'45.00 GBP = 441.00 CNY at 9.8 (rates of 2025-06-30)'."""
        return (f"{self.original:.2f} {self.original_currency} = {self.amount:.2f} {self.currency} "
                f"at {self.rate:g} (rates of {self.as_of.isoformat()})")


@dataclass(frozen=True, slots=True)
class Rates:
    """CNY per unit of each currency, as of one date."""

    per_unit: Mapping[str, float]
    as_of: date
    source: str = ""

    @classmethod
    def parse(cls, text: str, *, source: str = "BOT_FX_RATES") -> Rates:
        """'USD=7.17,GBP=9.80@2025-06-30' -> Rates; RatesError says what is wrong."""
        body, sep, day = text.strip().partition("@")
        if not sep:
            raise RatesError(f"{source}: add the date the rates are from, e.g. 'USD=7.17,GBP=9.80@2025-06-30'")
        try:
            as_of = date.fromisoformat(day.strip())
        except ValueError:
            raise RatesError(f"{source}: {day.strip()!r} is not a date (YYYY-MM-DD)") from None
        table: dict[str, float] = {BASE: 1.0}
        for part in filter(None, (p.strip() for p in body.split(","))):
            code, eq, value = part.partition("=")
            code = code.strip().upper()
            try:
                rate = float(value)
            except ValueError:
                rate = -1.0
            if not eq or len(code) != 3 or not code.isalpha() or rate <= 0:
                raise RatesError(f"{source}: {part!r} is not CODE=rate (CNY for one unit), e.g. GBP=9.80")
            table[code] = rate
        return cls(MappingProxyType(table), as_of, source)

    @classmethod
    def default(cls) -> Rates:
        return cls.parse(DEFAULT_RATES, source=DEFAULT_SOURCE)

    def knows(self, currency: str) -> bool:
        return currency.upper() in self.per_unit

    def convert(self, amount: float, currency: str, to: str = BASE) -> Converted | None:
        """None when either currency is not in the table."""
        src, dst = currency.upper(), to.upper()
        if src not in self.per_unit or dst not in self.per_unit:
            return None
        rate = self.per_unit[src] / self.per_unit[dst]
        return Converted(round(amount * rate, 2), dst, amount, src, round(rate, 6), self.as_of)

    def describe(self, currencies: set[str]) -> str:
        """The rates used for these currencies, with the date and where they come from."""
        used = ", ".join(f"1 {c} = {self.per_unit[c]:g} {BASE}" for c in sorted(currencies) if c in self.per_unit)
        where = f"; {self.source}" if self.source else ""
        return f"rates of {self.as_of.isoformat()}: {used}{where}"
