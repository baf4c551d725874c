"""The platform-neutral runtime: settings, store, sessions, rendering."""
