"""`python -m tripbot` is the `tripbot` command."""

from tripbot.cli import entry

entry()
