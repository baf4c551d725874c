"""Errors of the Slack adapter.

    SlackAdapterError            root of everything raised here
     ├── SlackNotConfigured      the settings lack what the chosen mode needs (missing: names)
     └── SlackCallFailed         a Web API call failed after the SDK's retries (method, error);
                                 also a bot.surface.DeliveryError (permanent unless worth a retry)
"""

from __future__ import annotations

from bot.surface import DeliveryError


class SlackAdapterError(Exception):
    pass


class SlackNotConfigured(SlackAdapterError):
    def __init__(self, missing: tuple[str, ...]) -> None:
        super().__init__(f"Slack needs {', '.join(missing)}")
        self.missing = missing


# Slack's error codes that no retry will change (the rest — ratelimited, internal_error,
# fatal_error, network trouble — are worth another try)
PERMANENT_ERRORS = frozenset({
    "channel_not_found", "not_in_channel", "is_archived", "account_inactive", "invalid_auth", "not_authed",
    "token_revoked", "msg_too_long", "no_text", "invalid_blocks", "restricted_action", "thread_not_found",
    "message_not_found", "cant_update_message", "missing_scope", "user_not_found", "invalid_arguments",
})


# what Slack answers while it is itself in trouble (besides no connection and HTTP 5xx)
OUTAGE_ERRORS = frozenset({"internal_error", "fatal_error", "service_unavailable", "request_timeout"})


class SlackCallFailed(SlackAdapterError, DeliveryError):
    def __init__(self, method: str, error: str, *, retry_after: float | None = None, outage: bool = False) -> None:
        DeliveryError.__init__(self, f"Slack {method} failed: {error}", permanent=error in PERMANENT_ERRORS,
                               retry_after=retry_after, outage=outage or error in OUTAGE_ERRORS)
        self.method = method
        self.error = error
