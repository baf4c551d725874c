"""The tool framework (BaseTool, ToolCollection, ToolResult, the ask_human signal) and the travel tools."""
