"""Control-flow signals raised by tools. They are not errors.

`HumanInputRequired` derives from BaseException (like asyncio.CancelledError) so that a
broad `except Exception` anywhere between the tool and the run loop lets it through.
"""

from __future__ import annotations


class HumanInputRequired(BaseException):
    """The run must pause until the person answers `question` for `tool_call_id`."""

    def __init__(self, question: str, tool_call_id: str, options: tuple[str, ...] = (), to: str = "") -> None:
        super().__init__(question)
        self.question = question
        self.tool_call_id = tool_call_id
        self.options = options
        self.to = to  # the traveller it is for, as the model named them; "" = whoever asked
