"""Conversation memory with a bound that never separates a tool result from its call."""

from __future__ import annotations

from collections.abc import Iterable

from agent_core.schema import Message, Role, ToolCall

INTERRUPTED = "No result: this call was interrupted (cancelled or superseded by a newer message)."


class Memory:
    """The messages of one conversation (no system prompt: that is added per call)."""

    def __init__(self, messages: Iterable[Message] = (), *, max_messages: int = 60) -> None:
        self.messages: list[Message] = list(messages)
        self.max_messages = max_messages

    def add(self, message: Message) -> None:
        self.messages.append(message)

    def extend(self, messages: Iterable[Message]) -> None:
        self.messages.extend(messages)

    def __len__(self) -> int:
        return len(self.messages)

    def last_assistant(self) -> Message | None:
        for msg in reversed(self.messages):
            if msg.role is Role.ASSISTANT:
                return msg
        return None

    def unanswered_calls(self) -> list[ToolCall]:
        """Tool calls of the latest assistant turn that have no tool result yet."""
        for idx in range(len(self.messages) - 1, -1, -1):
            msg = self.messages[idx]
            if msg.role is Role.ASSISTANT:
                if not msg.tool_calls:
                    return []
                answered = {
                    m.tool_call_id for m in self.messages[idx + 1 :] if m.role is Role.TOOL
                }
                return [tc for tc in msg.tool_calls if tc.id not in answered]
            if msg.role is Role.USER:
                return []
        return []

    def window(self) -> list[Message]:
        """The newest messages within the bound, cut only where a turn starts.

        A cut may fall only on a user message, so every tool message keeps the assistant turn
        that called it (the API answers 400 otherwise). Tool results are put in the order of the
        calls they answer, and results of calls that are still open are left out.
        """
        msgs = self.messages
        if len(msgs) <= self.max_messages:
            return _ordered(msgs)
        cut = len(msgs) - self.max_messages
        turn_starts = [i for i, m in enumerate(msgs) if m.role is Role.USER]
        after = [i for i in turn_starts if i >= cut]
        # no turn starts after the cut: keep the one huge turn whole, from its user message
        start = after[0] if after else (turn_starts[-1] if turn_starts else 0)
        return _ordered(msgs[start:])


def _ordered(msgs: list[Message]) -> list[Message]:
    out: list[Message] = []
    i = 0
    while i < len(msgs):
        msg = msgs[i]
        if msg.role is Role.TOOL:  # orphan: its call is not in the window
            i += 1
            continue
        out.append(msg)
        i += 1
        if msg.role is Role.ASSISTANT and msg.tool_calls:
            results: dict[str, Message] = {}
            while i < len(msgs) and msgs[i].role is Role.TOOL:
                tm = msgs[i]
                if tm.tool_call_id is not None:
                    results[tm.tool_call_id] = tm
                i += 1
            more_follows = i < len(msgs)
            for tc in msg.tool_calls:
                if tc.id in results:
                    out.append(results[tc.id])
                elif more_follows:  # an interrupted turn: the API needs every call answered
                    out.append(Message.tool(INTERRUPTED, tool_call_id=tc.id, name=tc.function.name))
    return out
