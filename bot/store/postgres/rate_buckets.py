"""PgBuckets: rate-limit buckets in one table every process shares (migrations/postgres/0011).

One statement refills the key's bucket by the time since its last request (on the server's
clock) and takes a token if there is one; concurrent requests for one key queue on its row, so
three processes together allow a person the limit once. Buckets untouched for longer than a
full refill say nothing a new bucket would not: they are swept now and then.
"""

from __future__ import annotations

import asyncpg

from bot.store.postgres.store import PostgresStore

TAKE = """
INSERT INTO rate_buckets AS b (key, tokens, at, ok)
VALUES ($1, $3 - 1, extract(epoch FROM clock_timestamp()), true)
ON CONFLICT (key) DO UPDATE SET
    tokens = LEAST($3, b.tokens + GREATEST(0, EXCLUDED.at - b.at) * $2 / 60.0)
             - CASE WHEN LEAST($3, b.tokens + GREATEST(0, EXCLUDED.at - b.at) * $2 / 60.0) >= 1 THEN 1 ELSE 0 END,
    ok = LEAST($3, b.tokens + GREATEST(0, EXCLUDED.at - b.at) * $2 / 60.0) >= 1,
    at = EXCLUDED.at
RETURNING ok, tokens
"""

SWEEP = "DELETE FROM rate_buckets WHERE at < extract(epoch FROM clock_timestamp()) - $1"

SWEEP_EVERY = 1000  # takes between two sweeps, per process
SWEEP_AFTER_S = 3600.0  # at least: a bucket idle this long is full again (any limit of 1+ a minute with bursts up to 60)


class PgBuckets:
    def __init__(self, store: PostgresStore) -> None:
        self.store = store
        self._takes = 0

    async def take(self, key: str, per_minute: float, burst: float) -> float:
        async def write(conn: asyncpg.Connection) -> tuple[bool, float]:
            row = await conn.fetchrow(TAKE, key, float(per_minute), float(burst))
            assert row is not None
            return bool(row["ok"]), float(row["tokens"])

        ok, tokens = await self.store.write(write)
        self._takes += 1
        if self._takes % SWEEP_EVERY == 0:
            horizon = max(SWEEP_AFTER_S, burst * 60.0 / per_minute)
            await self.store.write(lambda conn: conn.execute(SWEEP, horizon))
        return 0.0 if ok else (1.0 - tokens) * 60.0 / per_minute
