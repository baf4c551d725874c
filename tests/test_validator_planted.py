"""The planted-fault corpus (tests/validator_corpus/planted.py): on routes the first corpus does not
cover, every planted fault of every kind is caught by a finding of its category that names the
planted item, and no clean plan or clean answer text is flagged — with the sandbox looked up by
id and with the tools run again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.validator_corpus.generate import BASES
from tests.validator_corpus.planted import FAULTS, load
from tests.validator_corpus.planted_report import SOURCES, caught, check_case
from tests.validator_support import Sandbox, load_sandbox

ROUTES = {r["route"]: r for r in load()}
OLD_CORPUS = Path(__file__).parent / "validator_corpus"


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return load_sandbox()


def test_the_corpus_is_big_enough(sandbox: Sandbox) -> None:
    cases = [c for r in ROUTES.values() for c in r["cases"]]
    kinds = {c["kind"] for c in cases if c["expected"] != "ok"}
    assert len(ROUTES) >= 8 and len(kinds) >= 30
    assert kinds == {k for k, _ in FAULTS}  # every kind is planted somewhere

    def pair(plan: dict[str, Any]) -> tuple[str, str]:
        return sandbox.gazetteer.resolve_city(plan["origin_city"]).id, sandbox.gazetteer.resolve_city(plan["destination_city"]).id

    first = {pair(json.loads(p.read_text(encoding="utf-8"))["plan"]) for p in OLD_CORPUS.glob("ok_*.json")}
    assert len(first) == len(BASES)
    assert not {pair(r["plan"]) for r in ROUTES.values()} & first  # routes the first corpus does not test
    for r in ROUTES.values():
        clean = [c for c in r["cases"] if c["expected"] == "ok"]
        assert any(c["plan"] is not None for c in clean) and any(c["plan"] is None for c in clean), r["route"]
        assert any(m.get("role") == "tool" for m in r["messages"])  # the run's tool results are kept


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("route", sorted(ROUTES))
async def test_every_planted_fault_is_caught_and_no_clean_plan_flagged(route: str, source: str, sandbox: Sandbox) -> None:
    r = ROUTES[route]
    misses: list[str] = []
    for case in r["cases"]:
        report = await check_case(sandbox, r, case, source)
        if not caught(case, report):
            misses.append(f"{case['kind']} ({case['item']}): {[f.line() for f in report.findings] or 'nothing found'}")
        for f in report.findings:
            assert (f.item and f.evidence.render("en") and f.problem.render("zh") != f.problem.render("en")) or f.problem.key == "raw"
    assert not misses, "\n".join(misses)


def _case(route: str, kind: str) -> dict[str, Any]:
    return next(c for c in ROUTES[route]["cases"] if c["kind"] == kind)


async def test_findings_name_the_item_in_the_persons_language(sandbox: Sandbox) -> None:
    report = await check_case(sandbox, ROUTES["hz_bj"], _case("hz_bj", "drive_too_fast"), "provider")
    [f] = [f for f in report.findings if f.item.startswith("legs[0] drive")]
    assert "公里/小时" in f.problem.render("zh") and "km/h" in f.problem.render("en")
    report = await check_case(sandbox, ROUTES["cd_km_en"], _case("cd_km_en", "hotel_not_in_run"), "provider")
    [f] = report.findings
    assert "no tool in this run returned this hotel" in f.problem.render("en")
    assert "hotel_search" in f.evidence.render("en")  # what the run's search did return
