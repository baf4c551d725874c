"""The store's errors::

    StoreError            the store could not do what was asked
     ├── StoreClosed      used after close() or before open()
     ├── StoreUnavailable the database cannot be reached (PostgreSQL down, wrong BOT_DB_URL)
     └── LeaseLost        a fenced write or lease renewal after a newer lease of the chat exists
"""

from __future__ import annotations


class StoreError(Exception):
    pass


class StoreClosed(StoreError):
    pass


class StoreUnavailable(StoreError):
    """The database cannot be reached; the message names the setting to fix (BOT_DB_URL)."""


class LeaseLost(StoreError):
    """A chat's lease is no longer ours: a newer lease exists (or it was released).

    `fence` is the fencing number the refused write carried; `current_fence` and
    `current_owner` describe the lease row as the database has it now (None when the chat has
    no lease row, or it was released).
    """

    def __init__(self, chat_key: str, fence: int, current_fence: int | None, current_owner: str | None) -> None:
        self.chat_key = chat_key
        self.fence = fence
        self.current_fence = current_fence
        self.current_owner = current_owner
        super().__init__(
            f"lease of {chat_key!r} lost: this write carries fence {fence}, the chat's lease is now "
            f"fence {current_fence} held by {current_owner!r}"
        )
