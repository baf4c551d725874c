"""The structured trip plan an agent ends with; surfaces render it, the Validator checks it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from tools.plan_costs import plan_costs

LegKind = Literal["train", "flight", "taxi", "drive", "transit", "walk"]


class Leg(BaseModel):
    kind: LegKind
    number: str | None = Field(default=None, description="train or flight number, e.g. G1 or MU5101")
    origin: str = Field(description="station, airport or place name")
    destination: str
    origin_city: str | None = None
    destination_city: str | None = None
    depart: str = Field(description="YYYY-MM-DD HH:MM, local time")
    arrive: str = Field(description="YYYY-MM-DD HH:MM, local time")
    seat: str | None = None
    airline: str | None = None
    price: float = Field(default=0, ge=0, description="total for all travellers, CNY")
    source_id: str | None = Field(default=None, description="id returned by the tool that found it")


class HotelStay(BaseModel):
    hotel_id: str
    name: str
    city: str
    checkin_date: str = Field(description="YYYY-MM-DD")
    checkout_date: str = Field(description="YYYY-MM-DD")
    nights: int = Field(ge=1)
    price_per_night: float = Field(ge=0)
    total: float = Field(ge=0)
    breakfast: bool | None = None
    rooms: int | None = Field(
        default=None, ge=1, description="rooms booked; price_per_night is their rate together (none: one room)"
    )


class Visit(BaseModel):
    poi_id: str
    name: str
    city: str
    date: str = Field(description="YYYY-MM-DD")
    start: str | None = Field(default=None, description="HH:MM")
    duration_min: int | None = Field(default=None, ge=0)
    ticket_price: float = Field(default=0, ge=0)


class TravellerLegs(BaseModel):
    """One traveller of a team trip: their own way there and back (prices for this person)."""

    name: str = Field(description="the traveller as the request names them: <@U123>, @bo, or a plain name")
    home_city: str
    legs: list[Leg] = Field(default_factory=list, description="outbound then return legs; price for this person")


class TripPlan(BaseModel):
    title: str
    origin_city: str
    destination_city: str
    start_date: str
    end_date: str
    travellers: int = Field(default=1, ge=1)
    legs: list[Leg] = Field(default_factory=list)
    stays: list[HotelStay] = Field(default_factory=list)
    visits: list[Visit] = Field(default_factory=list)
    total_cost: float = Field(default=0, ge=0, description="CNY, sum of legs, stays and visits")
    currency: str = "CNY"
    alternatives: list[str] = Field(default_factory=list, description="backups if something falls through")
    notes: list[str] = Field(default_factory=list)
    unknowns: list[str] = Field(
        default_factory=list,
        description="what the plan could not know, from the tools' `caveats`: trains not on sale yet (and when they "
        "open), prices converted from another currency (with the rate and its date), providers that failed, facts "
        "taken from the sandbox instead of live data",
    )
    data_source: Literal["sandbox", "live", "mixed"] = "sandbox"
    party: list[TravellerLegs] = Field(
        default_factory=list,
        description="team trips: each traveller with their own legs from their home city; `legs` then holds only "
        "legs the whole party shares, and `travellers` equals the party's size",
    )
    timezone: str | None = Field(
        default=None, description="IANA time zone of the destination (e.g. Asia/Shanghai): the calendar file's zone"
    )
    meet_by: str | None = Field(
        default=None, description="team trips: YYYY-MM-DD HH:MM by which everyone has arrived (default: the first visit)"
    )

    @property
    def all_notes(self) -> list[str]:
        """The notes, then what the plan could not know: what a surface shows under its notes."""
        return [*self.notes, *self.unknowns]

    def computed_total(self) -> float:
        """The sum of the plan's cost lines (tools.plan_costs): legs, stays, and a ticket per traveller."""
        return plan_costs(self).total

    def cost_of(self, name: str) -> float:
        """One traveller's share: their own legs, an even share of what the party shares, their
        tickets (the shares add up to the total, to the fen)."""
        costs = plan_costs(self)
        share = costs.share_of(name)
        if share is not None:
            return share
        shared = sum(line.amount for line in costs.lines if not line.who and line.kind != "ticket")
        return round(shared / costs.travellers + sum(v.ticket_price for v in self.visits), 2)

    def for_traveller(self, name: str) -> TripPlan:
        """The plan as one traveller lives it (their legs around the shared ones), for the checks
        written for one person; shared prices stay the party's, as they are quoted."""
        mine = next(t for t in self.party if t.name == name)
        outbound = [leg for leg in mine.legs if leg.destination_city != mine.home_city]
        back = [leg for leg in mine.legs if leg.destination_city == mine.home_city]
        return self.model_copy(update={
            "origin_city": mine.home_city, "legs": [*outbound, *self.legs, *back], "party": [], "travellers": 1,
            "title": f"{self.title} ({mine.name})",
        })
