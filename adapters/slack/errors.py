"""Errors of the Slack adapter.

    SlackAdapterError            root of everything raised here
     ├── SlackNotConfigured      the settings lack what the chosen mode needs (missing: names)
     └── SlackCallFailed         a Web API call failed after the SDK's retries (method, error)
"""

from __future__ import annotations


class SlackAdapterError(Exception):
    pass


class SlackNotConfigured(SlackAdapterError):
    def __init__(self, missing: tuple[str, ...]) -> None:
        super().__init__(f"Slack needs {', '.join(missing)}")
        self.missing = missing


class SlackCallFailed(SlackAdapterError):
    def __init__(self, method: str, error: str) -> None:
        super().__init__(f"Slack {method} failed: {error}")
        self.method = method
        self.error = error
