"""The model client's HTTP transport: the openai SDK's httpx2 interface over aiohttp's connections.

The SDK sends through httpx2, whose connection pool (httpcore2 on anyio) walks every pooled
connection on each request and on each response's close, asking the kernel whether an idle one
was closed by the server, and parses HTTP in Python. aiohttp's pool hands out a connection
without the walk and parses in C: with 50 calls in flight a call cost 2.1-3.4 ms of CPU through
httpx2 and 1.3-1.4 ms through this transport (benchmarks/bench_model_transport.py; README,
"Model transport").

The SDK ships an aiohttp transport of its own (`openai.DefaultAioHttpClient`), but it reports a
server that dropped the connection as a connect *timeout*, so a dropped call would be counted
and logged as a timeout; this one maps aiohttp's failures to the httpx2 exceptions httpcore
raises for the same fault, which the SDK turns into `APITimeoutError` or `APIConnectionError`:

    aiohttp failure                          httpx2 exception (SDK error)
    connect timed out                        ConnectTimeout   (APITimeoutError)
    a read timed out                         ReadTimeout      (APITimeoutError)
    cannot connect (refused, DNS)            ConnectError     (APIConnectionError)
    hung up, body cut short, not HTTP        RemoteProtocolError (APIConnectionError)
    other socket errors                      ReadError        (APIConnectionError)

TLS trusts what httpx2 trusts (its `create_ssl_context`: the system's store, or `SSL_CERT_FILE`
/ `SSL_CERT_DIR`). Proxies from the environment still go through httpx2's own transports (the
client mounts them by URL), so only direct connections come here.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager

import aiohttp
import httpx2


class ModelTransport(httpx2.AsyncBaseTransport):
    """One aiohttp session per event loop, opened at the first request."""

    def __init__(self, *, max_connections: int = 1000, keepalive_s: float = 5.0) -> None:
        # httpx2's defaults as the SDK sets them: the same pool size and idle expiry as before
        self._max_connections = max_connections
        self._keepalive_s = keepalive_s
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        # made here, as httpx2's own transport makes it, not on the first call (loading the
        # certificates takes tens of ms); httpx2's: the same trust, SSL_CERT_FILE/_DIR honoured
        self._tls = httpx2.create_ssl_context()

    def _session_here(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop or self._session.closed:
            # a session belongs to its loop: a client used again under a new loop needs a new one
            connector = aiohttp.TCPConnector(limit=self._max_connections, keepalive_timeout=self._keepalive_s,
                                             ssl=self._tls)
            self._session = aiohttp.ClientSession(connector=connector, auto_decompress=False,
                                                  skip_auto_headers=("User-Agent", "Content-Type"))
            self._loop = loop
        return self._session

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        timeout = request.extensions.get("timeout", {})
        body = await request.aread()
        session = self._session_here()
        with _mapped():
            response = await session.request(
                request.method, str(request.url), headers=request.headers.multi_items(), data=body or None,
                allow_redirects=False,
                timeout=aiohttp.ClientTimeout(total=None, connect=timeout.get("pool"),
                                              sock_connect=timeout.get("connect"), sock_read=timeout.get("read")),
            )
        extensions: dict[str, object] = {"http_version": b"HTTP/1.1"}
        if response.reason:
            extensions["reason_phrase"] = response.reason.encode()
        return httpx2.Response(response.status, headers=response.raw_headers, stream=_Body(response),
                               request=request, extensions=extensions)

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed and self._loop is asyncio.get_running_loop():
            await self._session.close()
        self._session = None


class _Body(httpx2.AsyncByteStream):
    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _mapped():
            async for chunk in self._response.content.iter_any():
                yield chunk

    async def aclose(self) -> None:
        # a body read to its end gives the connection back; one cut short closes it, so a
        # model streaming a reply nobody reads any more stops writing
        self._response.release()


@contextmanager
def _mapped() -> Iterator[None]:
    try:
        yield
    except aiohttp.ConnectionTimeoutError as exc:
        raise httpx2.ConnectTimeout(str(exc) or "timed out connecting to the model") from None
    except (TimeoutError, aiohttp.ServerTimeoutError) as exc:  # before OSError: TimeoutError is one
        raise httpx2.ReadTimeout(str(exc) or "timed out waiting for the model") from None
    except aiohttp.ClientConnectorError as exc:
        raise httpx2.ConnectError(str(exc)) from None
    except (aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError, aiohttp.ClientResponseError) as exc:
        raise httpx2.RemoteProtocolError(str(exc) or type(exc).__name__) from None
    except (aiohttp.ClientError, OSError) as exc:
        raise httpx2.ReadError(str(exc) or type(exc).__name__) from None
