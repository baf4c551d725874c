"""The `tripbot` command: serve, chat, check (tripbot.cli)."""

import time

LAUNCHED = time.monotonic()  # before the heavy imports: startup deadlines count from here
