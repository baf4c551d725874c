"""Surfaces: one module (or package) per chat platform (telegram, slack, web, console).

Each adapter gets the Settings and the SessionManager, implements bot.surface.Surface, has
`async start()` / `async stop()`, and hands HTTP routes to bot.http.server.HttpServer through
`router()` when it needs any. Adapters import from bot/ and below, never from each other.
"""
