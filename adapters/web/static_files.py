"""The page and what it loads (adapters/web/static/), read once and served with their headers:
nothing inline runs, nothing comes from elsewhere (the page's Content-Security-Policy)."""

from __future__ import annotations

from pathlib import Path

from fastapi import Request
from fastapi.responses import Response

STATIC_DIR = Path(__file__).parent / "static"
PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
STATIC_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/plan_card.js": ("plan_card.js", "text/javascript; charset=utf-8"),
    "/app.css": ("app.css", "text/css; charset=utf-8"),
    "/favicon.svg": ("favicon.svg", "image/svg+xml"),
    "/favicon.ico": ("favicon.svg", "image/svg+xml"),  # browsers ask for it whatever the page says
}


class StaticFiles:
    def __init__(self) -> None:
        self._files = {route: ((STATIC_DIR / name).read_bytes(), media) for route, (name, media) in STATIC_FILES.items()}

    @property
    def routes(self) -> list[str]:
        return list(self._files)

    async def serve(self, request: Request) -> Response:
        body, media = self._files[request.url.path]
        headers = {"Cache-Control": "no-cache"}
        if media.startswith("text/html"):
            headers["Content-Security-Policy"] = PAGE_CSP
        return Response(body, media_type=media, headers=headers)
