"""The web chat: a single page at `/`, a JSON API and a Server-Sent Events stream per session.

Errors: this package raises none of its own; bad requests become HTTP 4xx answers.
"""

from adapters.web.adapter import WebAdapter

__all__ = ["WebAdapter"]
