"""Seeing what the bot does: Prometheus metrics, JSON logs with the chat they are about, one trace
per trip, and what model calls cost."""
