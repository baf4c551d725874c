"""Getting things to people: the outbox and its delivery worker (outbox), the bodies of what is
sent and the best-effort progress beside them (bodies), and a plan as files (plan_files)."""
