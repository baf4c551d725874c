"""The one HTTP server (server) every surface that needs HTTP hands its routes to, and the
operator's page (admin)."""
