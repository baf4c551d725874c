"""The chat: its state machine (machine), the one actor that applies its inbox rows in order
(actor: a row's facts, its transition, carrying it out), the facts a row is decided on (facts),
a turn, an answer or an expiry stored before its run starts (turn_steps), the run the actor
holds (live_run), what it says without a run (notices), which chats this process runs and under
which claim (live_chats), what a row means to the machine (triggers), who may answer which
question (addressing), what the surfaces ask about a chat (queries), the commands every surface
shares, and the timers of questions and sign-offs (deadlines)."""
