"""`python bot.py [serve|chat|check]`: the same as the installed `tripbot` command (tripbot/cli.py)."""

from tripbot.cli import entry

if __name__ == "__main__":
    entry()
