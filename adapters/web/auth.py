"""Access to the web chat's API: BOT_WEB_TOKEN, required whenever BOT_HOST is not loopback.

With a token set, every API and SSE request must carry it: `Authorization: Bearer <token>` (for
programs), or the session cookie that `POST /api/login {"token"}` sets (for the page:
EventSource cannot send headers). The cookie holds an HMAC of the token, not the token; it is
HttpOnly, SameSite=Strict (so another site cannot make the browser send it) and Secure when
the request came over HTTPS. Without a token (loopback only, enforced by Settings.problems)
everything is open, as before.
"""

from __future__ import annotations

import hashlib
import hmac

from fastapi import HTTPException, Request, Response

COOKIE = "tripbot_auth"
COOKIE_MAX_AGE_S = 30 * 86400


class WebAuth:
    def __init__(self, token: str | None) -> None:
        self._token = token or None
        self._cookie = hmac.new(token.encode(), b"tripbot-web-session", hashlib.sha256).hexdigest() if token else ""

    @property
    def required(self) -> bool:
        return self._token is not None

    def token_matches(self, given: str) -> bool:
        return self._token is not None and hmac.compare_digest(given.encode(), self._token.encode())

    def allowed(self, request: Request) -> bool:
        if self._token is None:
            return True
        header = request.headers.get("authorization", "")
        if header[:7].lower() == "bearer " and self.token_matches(header[7:].strip()):
            return True
        cookie = request.cookies.get(COOKIE, "")
        return bool(cookie) and hmac.compare_digest(cookie.encode(), self._cookie.encode())

    async def __call__(self, request: Request) -> None:
        """The FastAPI dependency on every protected route: 401 without the token."""
        if not self.allowed(request):
            raise HTTPException(401, "this bot needs its access token (BOT_WEB_TOKEN)",
                                headers={"WWW-Authenticate": 'Bearer realm="tripbot"'})

    def set_cookie(self, request: Request, response: Response) -> None:
        response.set_cookie(COOKIE, self._cookie, max_age=COOKIE_MAX_AGE_S, httponly=True, samesite="strict",
                            secure=request.url.scheme == "https", path="/")
