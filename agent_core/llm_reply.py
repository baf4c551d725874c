"""What the LLM client makes of a model's reply: the assistant turn (think blocks stripped, tool
calls the model wrote as text recovered when tools were offered) and its token counts (the ones
the endpoint reported, else our own count)."""

from __future__ import annotations

from typing import Any

from openai.types.chat import ChatCompletion, ChatCompletionMessage

from agent_core.llm_stream import StreamedReply
from agent_core.model import ToolChoice
from agent_core.schema import Function, Message, ToolCall
from agent_core.text_tool_calls import recover_tool_calls, strip_think
from agent_core.tokens import TokenCounter


def assistant_turn(raw_content: str | None, calls: list[ToolCall], tools: list[dict[str, Any]] | None,
                   tool_choice: ToolChoice) -> Message:
    content = strip_think(raw_content)
    if not calls and tools and tool_choice != "none":
        offered = {t["function"]["name"] for t in tools if isinstance(t.get("function"), dict)}
        recovered = recover_tool_calls(content, offered)
        content, calls = recovered.content, recovered.calls
    return Message.assistant(content or None, calls or None)


def whole_reply_calls(message: ChatCompletionMessage) -> list[ToolCall]:
    return [
        ToolCall(id=tc.id, function=Function(name=tc.function.name, arguments=tc.function.arguments or "{}"))
        for tc in (message.tool_calls or ())
        if tc.type == "function"
    ]


def streamed_reply_calls(reply: StreamedReply) -> list[ToolCall]:
    return [ToolCall(id=c.id, function=Function(name=c.name, arguments=c.arguments)) for c in reply.calls]


def whole_reply_tokens(response: ChatCompletion, prompt_estimate: int, counter: TokenCounter) -> tuple[int, int]:
    """(prompt, completion) tokens of a whole reply; `prompt_estimate`: our count of the request."""
    reported = response.usage
    if reported is not None and reported.prompt_tokens is not None:
        return int(reported.prompt_tokens), int(reported.completion_tokens or 0)
    message = response.choices[0].message
    completion = counter.count_text(message.content) + sum(
        counter.count_text(tc.function.arguments) for tc in (message.tool_calls or ()) if tc.type == "function"
    )
    return prompt_estimate, completion


def streamed_reply_tokens(reply: StreamedReply, prompt_estimate: int, counter: TokenCounter) -> tuple[int, int]:
    """(prompt, completion) tokens of a streamed reply (its last chunk's usage, when sent)."""
    if reply.prompt_tokens is not None:
        return reply.prompt_tokens, reply.completion_tokens or 0
    completion = counter.count_text(reply.content) + sum(counter.count_text(c.arguments) for c in reply.calls)
    return prompt_estimate, completion
