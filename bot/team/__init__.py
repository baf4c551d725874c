"""Team trips: sign-off of team plans by approvers (signoff: who may decide, what each decision
stores and says; signoff_steps: the chat machine's sign-off transitions as the actor runs them;
cards: the messages carrying a sign-off's buttons, and the line each shows once it is over)."""
