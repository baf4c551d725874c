"""Fakes of the network peers (OpenAI-compatible server, Telegram Bot API, Slack Web API, live providers).

They listen on 127.0.0.1 and are as strict as the real services."""
