"""Stable pseudo-randomness: values derived from sha256 of the query, the same on every machine.

Python's hash() is salted per process and `random` is global state; neither may feed the sandbox.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def stable_int(*parts: object) -> int:
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


def unit(*parts: object) -> float:
    """A float in [0, 1) fixed by `parts`."""
    return stable_int(*parts) / 2**64


def pick(options: Sequence[T], *parts: object) -> T:
    return options[stable_int(*parts) % len(options)]


def between(lo: float, hi: float, *parts: object) -> float:
    return lo + (hi - lo) * unit(*parts)
