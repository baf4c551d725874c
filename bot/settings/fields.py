"""What every group of settings shares: the base of a group, a setting's variable names, and
the checks several groups make of their values."""

from __future__ import annotations

from typing import ClassVar
from urllib.parse import urlsplit

from pydantic import AliasChoices, BaseModel, ValidationInfo


class SettingsGroup(BaseModel):
    """The settings of one concern: one section of the configuration reference (scripts/docs_gen.py),
    titled `section`. Only bot.settings.Settings, which combines every group, reads the environment."""

    section: ClassVar[str]


def alias(name: str) -> AliasChoices:
    """The variable a setting is read from, upper-case (the public contract) or lower-case."""
    return AliasChoices(name, name.lower())


def http_url(cls: type[BaseModel], v: object, info: ValidationInfo) -> object:
    """`not-a-url` would pass as text and fail later as "connection error": say so now."""
    if isinstance(v, str):
        v = v.strip()
        if not v:  # `OPENAI_BASE_URL=` in .env: unset, the default
            assert info.field_name is not None
            return cls.model_fields[info.field_name].default
        parts = urlsplit(v)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{v!r} is not an http:// or https:// URL")
    return v


def split_ids(v: object) -> object:
    """Platform user ids, comma- (or semicolon-) separated; one numeric id read as a number."""
    if isinstance(v, str):
        return [u.strip() for u in v.replace(";", ",").split(",") if u.strip()]
    if isinstance(v, int):
        return [str(v)]
    return v
