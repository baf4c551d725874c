"""Travel tools (trains, flights, hotels, places, routes, web search, location) and their providers.

bot.py builds, once:
    gazetteer = Gazetteer.load()
    sandbox = SandboxProvider(gazetteer)          # also serves lookups by id (get_train, ...)
    providers = make_provider(settings, gazetteer, sandbox)
    tools = build_travel_tools(gazetteer, providers)
"""

from tools.travel.factory import build_travel_tools, make_provider
from tools.travel.geo import City, Gazetteer
from tools.travel.provider import TravelProviders
from tools.travel.sandbox import SandboxProvider

__all__ = ["City", "Gazetteer", "SandboxProvider", "TravelProviders", "build_travel_tools", "make_provider"]
