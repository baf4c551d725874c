"""The agent framework: messages, the LLM client, agents and the events they yield."""
