"""Live travel data providers, used with BOT_TRAVEL_DATA=live when their keys are set.

    amap.AmapProvider        poi_search, poi_around_search, route_plan   (Amap Web Service v3, AMAP_KEY)
    web.SearxngWeb           web_search                                  (a SearXNG instance, SEARXNG_URL)
    web.TavilyWeb            web_search                                  (Tavily, TAVILY_API_KEY)
    rail.Rail12306           train_search                                (12306 public left-ticket query)
    duffel.DuffelFlights     flight_search                               (Duffel, DUFFEL_TOKEN)

Every client takes an httpx.AsyncClient and a base URL (LiveEndpoints), so tests point them at a
local fake. Hotels have no live source.

Errors: the package raises only tools.errors.ProviderError (typed fields provider, status_code,
retryable); its message says what went wrong and what the model can do about it.

    ToolError
     └── ProviderError      auth, quota, rate limit, HTTP 5xx, unreachable, malformed answers
"""

from tools.travel.live.amap import AmapProvider
from tools.travel.live.duffel import DuffelFlights
from tools.travel.live.http import LiveEndpoints
from tools.travel.live.rail import Rail12306
from tools.travel.live.web import SearxngWeb, TavilyWeb

__all__ = ["AmapProvider", "DuffelFlights", "LiveEndpoints", "Rail12306", "SearxngWeb", "TavilyWeb"]
