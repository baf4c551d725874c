"""/docs: the OpenAPI page for the web API, served with its own assets.

FastAPI's default page loads Swagger UI's script and stylesheet from a CDN, so it is blank on a
machine without internet (or behind a strict proxy). The assets come from the swagger-ui-bundle
package instead (Swagger UI's own release files, Apache-2.0) and are served from /docs/assets/.
"""

from __future__ import annotations

from pathlib import Path

import swagger_ui_bundle
from fastapi import APIRouter, HTTPException
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse

ASSETS = Path(swagger_ui_bundle.swagger_ui_path)
SERVED = {"swagger-ui-bundle.js": "text/javascript", "swagger-ui.css": "text/css", "favicon-32x32.png": "image/png"}


def api_docs_router(title: str, openapi_url: str = "/openapi.json") -> APIRouter:
    router = APIRouter(include_in_schema=False)

    async def page() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url, title=f"{title}: API", swagger_js_url="/docs/assets/swagger-ui-bundle.js",
            swagger_css_url="/docs/assets/swagger-ui.css", swagger_favicon_url="/docs/assets/favicon-32x32.png",
        )

    async def asset(name: str) -> FileResponse:
        if name not in SERVED:
            raise HTTPException(404, "no such asset")
        return FileResponse(ASSETS / name, media_type=SERVED[name], headers={"Cache-Control": "max-age=86400"})

    router.add_api_route("/docs", page, methods=["GET"])
    router.add_api_route("/docs/assets/{name}", asset, methods=["GET"])
    return router
