"""The platform-neutral runtime, a folder per concern.

    settings/     every setting, read from the environment and .env: a group per concern
    sessions.py   SessionManager: the front door (a message is stored in the chat's inbox first)
    surface.py    what adapters implement and hand in: chat keys, incoming messages, Surface
    chat/         the chat's state machine and the one actor that applies its inbox in order
    run/          one run of the agent: start, drive, outcome, review of the plan
    delivery/     the outbox and its worker; bodies of what is sent; a plan as files
    team/         sign-off of team plans
    cluster/      which process runs a chat: leases with fencing (PostgreSQL)
    store/        the store protocol; sqlite/ and postgres/
    observe/      metrics, logs, traces, model costs
    http/         the one HTTP server and the operator's page

A message's walk: adapter -> SessionManager.submit (inbox) -> chat.actor -> run.driver ->
delivery.outbox -> the surface.
"""
