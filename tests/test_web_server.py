"""bot.http.server.HttpServer over real HTTP on 127.0.0.1: health, metrics, body limit, lifecycle."""

from __future__ import annotations

import asyncio
import socket

import httpx
import pytest
from fastapi import APIRouter, Request

from bot.http.server import HttpServer, HttpServerError
from bot.observe.metrics import Metrics
from bot.settings import Settings


def _settings(port: int = 0) -> Settings:
    return Settings(_env_file=None, BOT_HOST="127.0.0.1", BOT_PORT=port)  # type: ignore[call-arg]


def _echo_router(seen: list[int]) -> APIRouter:
    router = APIRouter()

    @router.post("/echo")
    async def echo(request: Request) -> dict[str, int]:
        body = await request.body()
        seen.append(len(body))
        return {"bytes": len(body)}

    return router


@pytest.fixture
async def server_with_echo():
    seen: list[int] = []
    store_ok = {"value": True}

    async def store_check() -> bool:
        return store_ok["value"]

    server = HttpServer(_settings(), Metrics(), {"store": store_check})
    server.include_router(_echo_router(seen))
    await server.start()
    try:
        yield server, seen, store_ok
    finally:
        await server.stop()


async def test_port_zero_binds_a_free_port_and_reports_base_url(server_with_echo):
    server, _, _ = server_with_echo
    assert server.port > 0
    assert server.base_url == f"http://127.0.0.1:{server.port}"
    async with httpx.AsyncClient(base_url=server.base_url) as client:
        res = await client.get("/healthz")
    assert res.status_code == 200
    assert res.json() == {"ok": True, "checks": {"http": True, "store": True}, "unhealthy": []}


async def test_healthz_is_503_when_a_check_fails_or_raises(server_with_echo):
    server, _, store_ok = server_with_echo
    store_ok["value"] = False

    async def broken() -> bool:
        raise RuntimeError("surface down")

    async with httpx.AsyncClient(base_url=server.base_url) as client:
        res = await client.get("/healthz")
        assert res.status_code == 503
        assert res.json()["checks"]["store"] is False
        store_ok["value"] = True
        server.add_health_check("telegram", broken)
        res = await client.get("/healthz")
        assert res.status_code == 503
        assert res.json()["checks"] == {"http": True, "store": True, "telegram": False}


async def test_metrics_render_prometheus_text():
    metrics = Metrics()
    metrics.runs.labels(outcome="finished").inc(3)
    server = HttpServer(_settings(), metrics)
    await server.start()
    try:
        async with httpx.AsyncClient(base_url=server.base_url) as client:
            res = await client.get("/metrics")
    finally:
        await server.stop()
    assert res.status_code == 200
    assert res.headers["content-type"].startswith("text/plain")
    assert 'bot_runs_total{outcome="finished"} 3.0' in res.text


async def test_body_over_64k_is_refused_before_the_app_reads_it(server_with_echo):
    server, seen, _ = server_with_echo
    async with httpx.AsyncClient(base_url=server.base_url) as client:
        ok = await client.post("/echo", content=b"x" * 65536)
        assert ok.status_code == 200 and ok.json() == {"bytes": 65536}
        big = await client.post("/echo", content=b"x" * 65537)
        assert big.status_code == 413
        assert seen == [65536]

        async def chunks():
            for _ in range(20):
                yield b"y" * 8192  # 160 KB without a Content-Length

        streamed = await client.post("/echo", content=chunks())
        assert streamed.status_code == 413
        assert seen == [65536]


async def test_api_bodies_over_64k_get_413_not_422():
    server = HttpServer(_settings(), Metrics())
    router = APIRouter()

    @router.post("/api/thing")
    async def thing(payload: dict[str, str]) -> dict[str, int]:
        return {"n": len(payload)}

    server.include_router(router)
    await server.start()
    try:
        async with httpx.AsyncClient(base_url=server.base_url) as client:
            res = await client.post("/api/thing", json={"message": "长" * 30000})
    finally:
        await server.stop()
    assert res.status_code == 413


async def test_stop_releases_the_port_and_routes_must_come_first():
    server = HttpServer(_settings(), Metrics())
    await server.start()
    port = server.port
    with pytest.raises(RuntimeError):
        server.include_router(APIRouter())
    await server.stop()
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0
    again = HttpServer(_settings(port), Metrics())
    await again.start()  # the same port can be bound again at once
    await again.stop()


async def test_address_in_use_is_a_typed_error():
    first = HttpServer(_settings(), Metrics())
    await first.start()
    try:
        second = HttpServer(_settings(first.port), Metrics())
        with pytest.raises(HttpServerError) as info:
            await second.start()
        assert info.value.port == first.port
    finally:
        await first.stop()


async def test_stop_does_not_hang_on_a_stuck_streaming_response():
    server = HttpServer(_settings(), Metrics(), shutdown_timeout_s=1.0)
    router = APIRouter()
    started = asyncio.Event()

    @router.get("/forever")
    async def forever() -> object:
        from fastapi.responses import StreamingResponse

        async def gen():
            started.set()
            yield b"a"
            await asyncio.Event().wait()
            yield b"never"  # pragma: no cover

        return StreamingResponse(gen())

    server.include_router(router)
    await server.start()
    async with (
        httpx.AsyncClient(base_url=server.base_url) as client,
        client.stream("GET", "/forever") as res,
    ):
        await asyncio.wait_for(started.wait(), 5)
        assert res.status_code == 200
        await asyncio.wait_for(server.stop(), 6)
