"""The chat: its state machine (machine), the one actor that applies its inbox rows in order
(actor), what a row means to the machine (triggers), who may answer which question (addressing),
the commands every surface shares, and the timers of questions and sign-offs (deadlines)."""
