"""The part of a streamed reply a person may read, as it arrives.

A model's content can hold reasoning (`<think>...</think>`) and tool calls written as text
(```json blocks, `<tool_call>`, `<TOOL_BEGIN>`; see agent_core.text_tool_calls). Neither may
reach the person, yet a marker can be split across two chunks. So text that might be the start
of a marker is held back until the next chunk tells; a think block is dropped up to its close;
a tool-call marker hides everything after it (the reply's tool calls are read from the whole
content once it has arrived). `<answer>` tags are dropped and their content shown. A reply
whose first visible character opens JSON may be a tool call written as the whole content, so it
is held until the end.

`finish(final)` gives what is still owed: the rest of `final` (the reply's visible text as
read from the whole content) when what was shown is its beginning, so the streamed text and the
final text agree wherever the stream could tell.

`ShownText` follows a run's events for the text a person has been shown: text streamed in a step
that the step neither turned into a thought (tool calls followed) nor into the answer was
withdrawn (the agent asked the model for another turn), and the next step says so first with a
TextReset; a run that does not take an answer it was shown (a review asks for a better plan)
withdraws it explicitly (`withdraw`).
"""

from __future__ import annotations

from agent_core.events import (
    AnswerReady,
    Event,
    QuestionAsked,
    RunFailed,
    StepStarted,
    TextDelta,
    TextReset,
    Thought,
    ToolCalled,
)

_HIDE_OPEN, _HIDE_CLOSE = "<think>", "</think>"
_STOP = ("<tool_call>", "<tool_begin>", "```")
_DROP = ("<answer>", "</answer>")
_MARKERS = (_HIDE_OPEN, *_STOP, *_DROP)
_OPENERS = "<`"


class VisibleStream:
    def __init__(self) -> None:
        self._held = ""
        self._in_think = False
        self._stopped = False
        self._json_held = False
        self.shown = ""  # everything handed out so far

    def feed(self, delta: str) -> str:
        """The newly visible text after `delta` ("" when nothing is sure yet)."""
        if self._stopped or not delta:
            return ""
        self._held += delta
        out: list[str] = []
        while self._held and not self._stopped:
            if self._in_think:
                end = self._held.lower().find(_HIDE_CLOSE)
                if end < 0:
                    self._held = self._held[-(len(_HIDE_CLOSE) - 1):]
                    break
                self._held = self._held[end + len(_HIDE_CLOSE):]
                self._in_think = False
                continue
            if not self.shown and not out:
                self._held = self._held.lstrip()
                if not self._held:
                    break
                if self._held[0] in "{[" or self._json_held:
                    self._json_held = True  # perhaps a tool call written as JSON: wait for the end
                    break
            pos = _first_opener(self._held)
            if pos < 0:
                out.append(self._held)
                self._held = ""
                break
            out.append(self._held[:pos])
            rest = self._held[pos:]
            low = rest.lower()
            marker = next((m for m in _MARKERS if low.startswith(m)), None)
            if marker is None:
                if any(m.startswith(low) for m in _MARKERS):
                    self._held = rest  # maybe a marker: the next chunk tells
                    break
                out.append(rest[0])
                self._held = rest[1:]
                continue
            self._held = rest[len(marker):]
            if marker == _HIDE_OPEN:
                self._in_think = True
            elif marker in _STOP:
                self._stopped = True
                self._held = ""
        text = "".join(out)
        self.shown += text
        return text

    def finish(self, final: str) -> str:
        """What is still owed of `final`, the reply's visible text read from the whole content."""
        final = final.strip()
        if final.startswith(self.shown) and len(final) > len(self.shown):
            tail = final[len(self.shown):]
            self.shown = final
            return tail
        return ""


class ShownText:
    def __init__(self) -> None:
        self._step: int | None = None  # the step whose streamed text is on screen
        self._taken = False  # ... and the run took it (as its answer)

    def see(self, event: Event) -> TextReset | None:
        """The reset to show before `event`, when `event` shows the text on screen was withdrawn."""
        if isinstance(event, TextDelta):
            if event.text:
                self._step, self._taken = event.step, False
        elif isinstance(event, StepStarted):
            if self._step is not None and not self._taken:
                return self.withdraw()
            self._step = None
        elif isinstance(event, AnswerReady):
            self._taken = True
        elif isinstance(event, Thought | ToolCalled | QuestionAsked | RunFailed):
            self._step = None  # a thought (surfaces show it as such), or the run paused or ended
        return None

    def withdraw(self) -> TextReset | None:
        """The text on screen is not the answer after all; None when none is on screen."""
        step, self._step = self._step, None
        return TextReset(step) if step is not None else None


def _first_opener(text: str) -> int:
    found = [i for i in (text.find(c) for c in _OPENERS) if i >= 0]
    return min(found) if found else -1
