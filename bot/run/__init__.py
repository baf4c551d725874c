"""A run of the agent for one chat: how a run starts or resumes (start), the loop that drives one
segment of it from start to outcome (driver), what a segment ends with, writes as it goes and is
doing now (segment), what its end writes (outcome), the agent it runs (agent_factory), the
records handed to surfaces (records), and the review of its plan before posting (review)."""
