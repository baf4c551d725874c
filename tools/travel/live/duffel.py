"""Flights from Duffel: POST /air/offer_requests (economy, one adult), offers grouped by flight."""

from __future__ import annotations

import asyncio
import re
from datetime import datetime
from typing import Any

import httpx
from pydantic import BaseModel, Field

from tools.errors import ProviderError
from tools.travel.geo import Gazetteer
from tools.travel.live.http import (
    DUFFEL_BASE_URL,
    Reply,
    body,
    join,
    parse,
    refuse_redirect,
    send,
    server_error,
)
from tools.travel.models import Flight, FlightTransfer, Found, Seat
from tools.travel.money import BASE, Rates
from tools.travel.provider import FlightQuery

PROVIDER = "duffel"
LABEL = "Duffel flight search"
VERSION = "v2"
_ISO_DURATION = re.compile(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?)?$")
# Chinese short names, as the airline_name filter uses them; others keep Duffel's name
_AIRLINES = {"CA": "中国国航", "MU": "东方航空", "CZ": "南方航空", "HU": "海南航空", "MF": "厦门航空", "3U": "四川航空",
             "ZH": "深圳航空", "FM": "上海航空", "SC": "山东航空", "HO": "吉祥航空", "9C": "春秋航空", "KN": "中国联航",
             "JD": "首都航空", "GS": "天津航空", "8L": "祥鹏航空", "EU": "成都航空", "CX": "国泰航空"}


class Named(BaseModel):
    iata_code: str | None = None
    name: str = ""


class Aircraft(BaseModel):
    name: str = ""


class SegmentPassenger(BaseModel):
    cabin_class: str = "economy"
    cabin_class_marketing_name: str = ""


class Segment(BaseModel):
    origin: Named
    destination: Named
    departing_at: str
    arriving_at: str
    duration: str | None = None
    marketing_carrier: Named
    marketing_carrier_flight_number: str
    aircraft: Aircraft | None = None
    passengers: list[SegmentPassenger] = Field(default_factory=list)


class Slice(BaseModel):
    segments: list[Segment]


class Offer(BaseModel):
    id: str
    total_amount: str
    total_currency: str
    slices: list[Slice]


class OfferRequest(BaseModel):
    id: str
    offers: list[Offer] = Field(default_factory=list)


class OfferRequestAnswer(BaseModel):
    data: OfferRequest


class ApiError(BaseModel):
    type: str = ""
    code: str = ""
    title: str = ""
    message: str = ""


class ErrorAnswer(BaseModel):
    errors: list[ApiError] = Field(default_factory=list)


def minutes(iso: str | None, start: str, end: str) -> int:
    m = _ISO_DURATION.match(iso or "")
    if m and any(m.groups()):
        d, h, mi = (int(g or 0) for g in m.groups())
        return d * 1440 + h * 60 + mi
    return int((datetime.fromisoformat(end[:19]) - datetime.fromisoformat(start[:19])).total_seconds() // 60)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def local(ts: str) -> str:
    return datetime.fromisoformat(ts[:19]).strftime("%Y-%m-%d %H:%M")


class DuffelFlights:
    def __init__(self, client: httpx.AsyncClient, token: str, gazetteer: Gazetteer, *,
                 base_url: str = DUFFEL_BASE_URL, rates: Rates | None = None) -> None:
        self._http = client
        self._token = token
        self._gaz = gazetteer
        self._base = base_url
        self._rates = rates or Rates.default()

    def _error(self, reply: Reply) -> ProviderError:
        first = ApiError()
        try:
            errors = ErrorAnswer.model_validate(reply.json()).errors
            first = errors[0] if errors else first
        except ValueError:
            pass
        said = f" ({first.message or first.title})" if (first.message or first.title) else ""
        if reply.status == 401:
            text, retry = f"the DUFFEL_TOKEN was refused{said}; the operator must fix the token", False
        elif reply.status == 403:
            text, retry = f"the DUFFEL_TOKEN may not search flights{said}", False
        elif reply.status == 422:
            text, retry = f"Duffel rejected the search{said}; check the airports and that the date is in the future", False
        elif reply.status == 429:
            wait = reply.headers.get("ratelimit-reset", "")
            text, retry = f"too many searches right now{said}; wait a minute and try again" + (
                f" (limit resets at {wait})" if wait else ""), True
        else:
            text, retry = f"the search was refused (HTTP {reply.status}){said}", False
        return ProviderError(f"{LABEL}: {text}", provider=PROVIDER, status_code=reply.status, retryable=retry)

    async def _offers(self, origin: str, destination: str, day: str, connections: int) -> list[Offer]:
        payload: dict[str, Any] = {"data": {
            "slices": [{"origin": origin, "destination": destination, "departure_date": day}],
            "passengers": [{"type": "adult"}], "cabin_class": "economy", "max_connections": connections}}
        reply = await send(self._http, "POST", join(self._base, "/air/offer_requests"), provider=PROVIDER, label=LABEL,
                           params={"return_offers": "true", "supplier_timeout": "10000"}, json=payload,
                           headers={"Authorization": f"Bearer {self._token}", "Duffel-Version": VERSION,
                                    "Accept": "application/json"})
        refuse_redirect(reply, provider=PROVIDER, label=LABEL)
        if reply.status >= 500:
            raise server_error(reply, provider=PROVIDER, label=LABEL)
        if reply.status not in (200, 201):
            raise self._error(reply)
        answer = parse(OfferRequestAnswer, body(reply, provider=PROVIDER, label=LABEL), provider=PROVIDER, label=LABEL)
        return answer.data.offers

    def _price(self, o: Offer) -> tuple[float, str, str | None] | None:
        """The offer's total in CNY when the rate table knows its currency (with the quote it came
        from), else as quoted; None for a total that is not a number ("--")."""
        try:
            amount = float(o.total_amount)
        except ValueError:
            return None
        currency = o.total_currency.upper()
        if currency == BASE:
            return amount, BASE, None
        converted = self._rates.convert(amount, currency)
        if converted is None:
            return amount, currency, None
        return converted.amount, BASE, converted.quote()

    @staticmethod
    def _unpriced(offers: list[Offer]) -> list[str]:
        bad = [o for o in offers if not _is_number(o.total_amount)]
        if not bad:
            return []
        return [f"{len(bad)} Duffel offer(s) came without a usable price ({bad[0].total_amount!r}) and are left out"]

    def _flight(self, s: Segment, q: FlightQuery, price: float, currency: str = BASE,
                quoted: str | None = None) -> Flight:
        code = s.marketing_carrier.iata_code or ""
        dep, arr = self._gaz.airport(s.origin.iata_code or ""), self._gaz.airport(s.destination.iata_code or "")
        cabin = s.passengers[0].cabin_class_marketing_name if s.passengers else ""
        return Flight(
            number=f"{code}{s.marketing_carrier_flight_number}", airline=_AIRLINES.get(code, s.marketing_carrier.name),
            from_airport=dep.name_zh if dep else s.origin.name, from_airport_code=s.origin.iata_code or "",
            to_airport=arr.name_zh if arr else s.destination.name, to_airport_code=s.destination.iata_code or "",
            from_city=self._gaz.city(dep.city_id).name_zh if dep else q.origin.name_zh,
            to_city=self._gaz.city(arr.city_id).name_zh if arr else q.destination.name_zh,
            depart=local(s.departing_at), arrive=local(s.arriving_at),
            duration_min=minutes(s.duration, s.departing_at, s.arriving_at),
            aircraft=s.aircraft.name if s.aircraft else "", price=price, currency=currency, quoted=quoted,
            cabins=[Seat(seat="经济舱" + (f" ({cabin})" if cabin and cabin.lower() != "economy" else ""), price=price, left=1,
                         currency=currency)],
        )

    async def _search(self, q: FlightQuery, connections: int) -> tuple[list[Offer], set[str]]:
        pairs = [(a, b) for a in q.from_airports for b in q.to_airports][:4]
        groups = await asyncio.gather(*(self._offers(a, b, q.day.isoformat(), connections) for a, b in pairs))
        offers = [o for g in groups for o in g]
        return offers, {o.total_currency for o in offers}

    def _money(self, currencies: set[str]) -> tuple[str, list[str]]:
        """The note and the caveats for the currencies Duffel quoted in."""
        note = "live offers from Duffel (economy, one adult); left 1 means bookable, Duffel gives no seat count"
        foreign = sorted(c.upper() for c in currencies) if currencies else []
        foreign = [c for c in foreign if c != BASE]
        known = {c for c in foreign if self._rates.knows(c)}
        caveats = []
        if known:
            used = self._rates.describe(known)
            note += f"; fares quoted in {', '.join(sorted(known))} are shown in CNY ({used}); `quoted` keeps Duffel's own price"
            caveats.append(f"flight fares converted to CNY from {', '.join(sorted(known))} ({used}); the amount charged "
                           "depends on the rate on the day of booking")
        unknown = [c for c in foreign if c not in known]
        if unknown:
            note += f"; fares in {', '.join(unknown)} stay as quoted: no rate for them in the rate table"
            caveats.append(f"fares in {', '.join(unknown)} are not converted (no rate in BOT_FX_RATES); CNY price "
                           "limits were not applied to them")
        return note, caveats

    async def flights(self, q: FlightQuery) -> Found[Flight]:
        offers, currencies = await self._search(q, 0)
        best: dict[tuple[str, str], Flight] = {}
        for o in offers:
            segs = o.slices[0].segments if o.slices else []
            if len(segs) != 1:
                continue
            priced = self._price(o)
            if priced is None:
                continue
            f = self._flight(segs[0], q, *priced)
            key = (f.number, f.depart)
            if key not in best or f.price < best[key].price:
                best[key] = f
        items = sorted(best.values(), key=lambda f: (f.depart, f.price, f.number))
        note, caveats = self._money(currencies)
        return Found(items, PROVIDER, note, caveats=caveats + self._unpriced(offers))

    async def flight_transfers(self, q: FlightQuery, limit: int) -> Found[FlightTransfer]:
        offers, currencies = await self._search(q, 1)
        best: dict[str, FlightTransfer] = {}
        for o in offers:
            segs = o.slices[0].segments if o.slices else []
            if len(segs) != 2:
                continue
            priced = self._price(o)
            if priced is None:
                continue
            price, currency, quoted = priced
            legs = [self._flight(s, q, 0.0, currency) for s in segs]
            layover = minutes(None, segs[0].arriving_at, segs[1].departing_at)
            total = minutes(None, segs[0].departing_at, segs[1].arriving_at)
            t = FlightTransfer(id="+".join(leg.number for leg in legs), via_airport=legs[0].to_airport,
                               layover_min=layover, total_min=total, price=price, legs=legs, currency=currency,
                               quoted=quoted)
            if t.id not in best or price < best[t.id].price:
                best[t.id] = t
        items = sorted(best.values(), key=lambda t: (t.price, t.total_min, t.id))[:limit]
        note, caveats = self._money(currencies)
        return Found(items, PROVIDER, note + "; a connection's price covers both legs",
                     caveats=caveats + self._unpriced(offers))
