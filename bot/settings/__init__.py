"""Settings from the environment and `.env`: one Settings, made of a group per concern.

The variable names are the public contract. Every field has a description: the docs'
configuration reference is generated from them, a section per group (scripts/docs_gen.py), and
tests/test_docs.py fails on a field without one.

    settings.py       Settings: every group in one object; the checks across groups (problems)
    model.py          the model (OPENAI_*, BOT_LLM_*) and the Validator (BOT_VALIDATE*)
    platforms.py      Telegram (TELEGRAM_*) and Slack (SLACK_*)
    store.py          SQLite or PostgreSQL (BOT_DB_*), leases (BOT_LEASE_S)
    access.py         the HTTP server (BOT_HOST, BOT_PORT), tokens, rate limits, the allowlist
    conversations.py  questions, runs and history; team trips and their sign-off
    delivery.py       retries of deliveries; the pace kept with the platforms
    observe.py        logs and traces (BOT_LOG_*, OTEL_*, BOT_TRACE)
    travel.py         travel data: sandbox or live, the live services' keys and URLs, FX rates
    fields.py         what the groups share: SettingsGroup, variable names, URL and id-list checks
"""

from bot.settings.settings import GROUPS, Settings

__all__ = ["GROUPS", "Settings"]
