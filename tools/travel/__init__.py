"""Travel tools (trains, flights, hotels, places, routes, web search, location) and their providers."""
