"""The Slack surface: threads in channels and DMs, on slack-bolt (async) and slack-sdk.

    SlackAdapter(settings, manager)     bot.surface.Surface for platform "slack"; start/stop; router()
"""

from adapters.slack.adapter import SlackAdapter

__all__ = ["SlackAdapter"]
