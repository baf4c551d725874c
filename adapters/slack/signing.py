"""Slack request signatures, checked by Bolt's own request verification (v0 HMAC-SHA256 over
"v0:{timestamp}:{body}" with the signing secret, timestamp within five minutes), run before the
empty 200 that acknowledges a delivery.

Bolt logs a refused request with its signature and whole body; a forged request's body is
nothing we want in our logs, so a logging filter on Bolt's verification logger withholds them.
Our own line says why it was refused (unsigned, stale or forged), the timestamp, the size and
the sender, never the body.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping

from slack_bolt.middleware.request_verification.async_request_verification import (
    AsyncRequestVerification,
)
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

WINDOW_S = 300  # Bolt's SignatureVerifier window
BOLT_VERIFICATION_LOGGER = "slack_bolt.RequestVerification"


class WithholdRefusedBodies(logging.Filter):
    """Rewrites Bolt's "Invalid request signature detected (signature: ..., body: ...)"."""

    def filter(self, record: logging.LogRecord) -> bool:
        if str(record.msg).startswith("Invalid request signature detected"):
            record.msg = "Invalid request signature detected (signature, timestamp and body withheld)"
            record.args = ()
        return True


_FILTER = WithholdRefusedBodies()


class SignedRequests:
    def __init__(self, signing_secret: str, *, logger: logging.Logger | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self._verification = AsyncRequestVerification(signing_secret, base_logger=logger)
        self._clock = clock
        bolt_logger = logging.getLogger(BOLT_VERIFICATION_LOGGER)
        if _FILTER not in bolt_logger.filters:
            bolt_logger.addFilter(_FILTER)

    async def refusal(self, request: AsyncBoltRequest) -> str | None:
        """None when Bolt accepts the request's signature; else why not (for the log only)."""

        async def accepted() -> BoltResponse:
            return BoltResponse(status=200)

        try:
            checked = await self._verification.async_process(req=request, resp=BoltResponse(status=200), next=accepted)
        except ValueError:  # Bolt's verifier raises on a timestamp that is not a number
            return "forged"
        if checked.status == 200:
            return None
        return self.reason(request.headers)

    def reason(self, headers: Mapping[str, object]) -> str:
        def first(name: str) -> str:
            value = headers.get(name)
            if isinstance(value, (list, tuple)):
                return str(value[0]) if value else ""
            return str(value or "")

        timestamp, signature = first("x-slack-request-timestamp"), first("x-slack-signature")
        if not timestamp or not signature:
            return "unsigned"
        try:
            if abs(self._clock() - int(timestamp)) > WINDOW_S:
                return "stale"
        except ValueError:
            pass
        return "forged"
