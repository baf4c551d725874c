"""Several processes on one database: which process runs a chat (ownership: the interface and the
one-process case; leases: PostgreSQL leases with fencing, renewal and takeover)."""
