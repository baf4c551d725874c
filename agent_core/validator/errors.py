"""Errors of the Validator.

    ValidatorError                 grading could not be done as asked
     └── RubricUnavailable         the rubric model run ended without a verdict (reason, detail)

Deterministic checks never raise: a fact that cannot be re-queried is itself a finding.
"""

from __future__ import annotations


class ValidatorError(Exception):
    """Root of every error raised by agent_core.validator."""


class RubricUnavailable(ValidatorError):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"the rubric run gave no verdict ({reason}): {detail}")
        self.reason = reason
        self.detail = detail
