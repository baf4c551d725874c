"""Errors raised inside tools.

    ToolError                 a tool could not do what was asked; the message goes to the model
     ├── ToolArgumentError    the arguments were malformed or out of range (field, hint)
     └── ProviderError        a data provider failed (provider, status_code, retryable)

These are errors, reported to the model as observations. The ask_human pause is not one of
them: see tools.signals.HumanInputRequired.
"""

from __future__ import annotations


class ToolError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ToolArgumentError(ToolError):
    def __init__(self, message: str, *, field: str | None = None, suggestions: list[str] | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.suggestions = suggestions or []


class ProviderError(ToolError):
    def __init__(
        self, message: str, *, provider: str, status_code: int | None = None, retryable: bool = False
    ) -> None:
        super().__init__(message)
        self.provider = provider
        self.status_code = status_code
        self.retryable = retryable
