"""PostgresStore, for several processes (imported only where BOT_DB_URL selects it, so asyncpg loads
only then): the pool (connect), migrations (migrate), the writes (writes, calls), chat leases with
fencing (leases), wake-ups across processes (notify), one-of-several jobs (session_lock) and the
web chat's events between processes (web_events)."""
