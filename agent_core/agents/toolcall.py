"""ToolCallAgent: think = one model call with the tool list; act = run the chosen tools."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Any

from opentelemetry.trace import Span, Status, StatusCode, Tracer
from opentelemetry.util.types import AttributeValue

from agent_core.agents.react import ReActAgent
from agent_core.errors import LoopDetected
from agent_core.events import (
    AnswerReady,
    Event,
    QuestionAsked,
    StepStarted,
    TextDelta,
    Thought,
    ToolCalled,
    ToolFinished,
)
from agent_core.journal import PendingAsk, RunJournal
from agent_core.memory import Memory
from agent_core.model import ChatModel, StreamingChatModel, TokenUsage, ToolChoice
from agent_core.schema import AgentState, Message, Origin, Role, ToolCall
from agent_core.text_tool_calls import answer_text, strip_think
from agent_core.tracing import span, summary
from tools.base import ToolContext, ToolResult
from tools.collection import ToolCollection
from tools.signals import HumanInputRequired

ASK_HUMAN = "ask_human"
EMPTY_REPLY_NUDGE = "Your last reply was empty. Call a tool, ask the person, or give the final answer."
REPEAT_LIMIT = 3  # the same call this many times in a row is a loop


class ToolCallAgent(ReActAgent):
    name = "toolcall"

    def __init__(
        self,
        *,
        model: ChatModel,
        tools: ToolCollection,
        system_prompt: str,
        context: ToolContext,
        memory: Memory | None = None,
        max_steps: int = 20,
        steps_taken: int = 0,
        usage: TokenUsage | None = None,
        tool_choice: ToolChoice = "auto",
        on_tool_result: Callable[[str, ToolResult], None] | None = None,
        tracer: Tracer | None = None,
    ) -> None:
        super().__init__(memory=memory, max_steps=max_steps, steps_taken=steps_taken)
        self.model = model
        self.tools = tools
        self.system_prompt = system_prompt
        self.context = context
        self.usage = usage if usage is not None else TokenUsage()
        self.tool_choice = tool_choice
        self.on_tool_result = on_tool_result
        self.tracer = tracer  # a span per tool call; None: tracing off
        self.answer: AnswerReady | None = None

    # -- think ---------------------------------------------------------------------------
    def has_pending_actions(self) -> bool:
        return bool(self.memory.unanswered_calls())

    async def think(self, journal: RunJournal) -> AsyncIterator[Event]:
        recovered = await self.recover_answer()
        if recovered is not None:  # a resumed run whose answer was already made
            yield self._finish(recovered)
            return
        self.current_step += 1
        yield StepStarted(self.current_step, self.max_steps)
        for steering in journal.incoming():  # what the person added while the run worked
            self.memory.add(steering)
        reply: Message | None = None
        async for item in self._ask():
            if isinstance(item, Message):
                reply = item
            else:
                yield item
        assert reply is not None
        if not reply.tool_calls and not (reply.content or "").strip():
            async for item in self._ask(nudge=EMPTY_REPLY_NUDGE):
                if isinstance(item, Message):
                    reply = item
                else:
                    yield item
        # A final text the agent does not accept as it is gets one more turn: a note asking for
        # more (quoting the draft) takes the reply's place, so the person's history never shows a
        # draft they did not get, and a resumed run asks the model again.
        again = None if reply.tool_calls or self.current_step >= self.max_steps else self.follow_up(reply)
        if again is not None:
            self.memory.add(again)
            await journal.record([again], step=self.current_step)
            return
        self.memory.add(reply)
        # A reply that only asks the person, or that is the final text, has no effect until the
        # pause or the end of the run is stored: it rides with that write (one commit for the
        # step, as for any step); a crash before it re-asks the model, and nobody has seen the
        # question or the answer yet. Any other reply is committed before its tools run, so a
        # crash never repeats a call to the model whose tools had effects.
        no_effect = not reply.tool_calls or all(tc.function.name == ASK_HUMAN for tc in reply.tool_calls)
        reads_only = self.tools.read_only(tc.function.name for tc in reply.tool_calls or ())
        await journal.record([reply], step=self.current_step, defer=no_effect, wait=not reads_only)
        visible = visible_text(reply.content)
        if not reply.tool_calls:
            text = visible or "I could not produce an answer. Please rephrase your request."
            yield self._finish(AnswerReady(text))
            return
        self._check_loop(reply)
        if visible:
            yield Thought(self.current_step, visible)

    async def _ask(self, nudge: str | None = None) -> AsyncIterator[TextDelta | Message]:
        """The model's turn: its visible text as TextDelta events while a streaming model writes
        it, then the turn itself (the last item)."""
        messages = [Message.system(self.prompt_for_turn()), *self.memory.window()]
        if nudge:
            messages.append(Message.user(nudge, origin=Origin.NUDGE))  # the loop's words, not the person's
        if isinstance(self.model, StreamingChatModel):
            async for piece in self.model.stream_tool(
                messages, tools=self.tools.to_params(), tool_choice=self.tool_choice, usage=self.usage
            ):
                yield TextDelta(self.current_step, piece) if isinstance(piece, str) else piece
            return
        yield await self.model.ask_tool(
            messages, tools=self.tools.to_params(), tool_choice=self.tool_choice, usage=self.usage
        )

    def prompt_for_turn(self) -> str:
        """The system prompt of this model call (an agent may add what the conversation says)."""
        return self.system_prompt

    def follow_up(self, reply: Message) -> Message | None:
        """A note to store instead of `reply` (a text-only reply, not yet in memory) asking the
        model for one more turn, rather than taking the reply as the final answer; None (the
        default) takes it."""
        return None

    def _check_loop(self, reply: Message) -> None:
        signature = _signature(reply)
        repeats = 1
        for msg in reversed(self.memory.messages[:-1]):
            if msg.role is not Role.ASSISTANT:
                continue
            if _signature(msg) != signature:
                break
            repeats += 1
        if repeats >= REPEAT_LIMIT and reply.tool_calls:
            raise LoopDetected(reply.tool_calls[0].function.name, repeats)

    # -- act -----------------------------------------------------------------------------
    async def act(self, journal: RunJournal) -> AsyncIterator[Event]:
        pending = self.memory.unanswered_calls()
        asks = [tc for tc in pending if tc.function.name == ASK_HUMAN]
        others = [tc for tc in pending if tc.function.name != ASK_HUMAN]
        results: list[Message] = []
        ended: ToolResult | None = None
        for call in others:
            yield ToolCalled(self.current_step, call.id, call.function.name, _args_for_display(call))
            with span(self.tracer, f"tool {call.function.name}", _tool_attributes(call) if self.tracer else None) as s:
                result = await self.tools.execute(call.function.name, call.function.arguments, self._ctx(call))
                if s.is_recording():
                    _record_result(s, result)
            if self.on_tool_result is not None:
                self.on_tool_result(call.function.name, result)
            message = Message.tool(result.observation(), tool_call_id=call.id, name=call.function.name)
            self.memory.add(message)
            # in the journal at once (written with the next write): a run stopped during the next
            # tool keeps this result
            await journal.record([message], step=self.current_step, defer=True)
            yield ToolFinished(self.current_step, call.id, call.function.name, result.ok, result.summary)
            if result.ends_run and result.ok and ended is None:
                ended = result
        if asks and ended is None:
            # every question of the turn is asked at once (one per person on a team trip); the
            # run pauses until all of them are answered or expired, each answer its call's result
            waiting: list[PendingAsk] = []
            for call in asks:
                yield ToolCalled(self.current_step, call.id, call.function.name, _args_for_display(call))
                try:
                    with span(self.tracer, f"tool {ASK_HUMAN}", _tool_attributes(call) if self.tracer else None) as s:
                        try:
                            result = await self.tools.execute(call.function.name, call.function.arguments,
                                                              self._ctx(call))
                        except HumanInputRequired:
                            s.set_attribute("tool.paused", True)  # the run pauses here: not an error
                            raise
                        if s.is_recording():
                            _record_result(s, result)
                except HumanInputRequired as signal:
                    waiting.append(PendingAsk(signal.tool_call_id, signal.question, signal.options, signal.to))
                    continue
                # ask_human refused its arguments: the error goes back to the model
                message = Message.tool(result.observation(), tool_call_id=call.id, name=call.function.name)
                self.memory.add(message)
                results.append(message)
                yield ToolFinished(self.current_step, call.id, call.function.name, result.ok, result.summary)
            if waiting:
                await journal.pause(results, waiting, step=self.current_step)
                self.state = AgentState.WAITING
                for ask in waiting:
                    yield QuestionAsked(ask.tool_call_id, ask.question, ask.options, ask.to)
                return
        elif asks:  # the run ends: the open questions are moot
            for call in asks:
                message = Message.tool("Not asked: the task ended first.", tool_call_id=call.id, name=ASK_HUMAN)
                self.memory.add(message)
                results.append(message)
        if results:  # reproducible: written with the next model reply (or the pause, or the end)
            await journal.record(results, step=self.current_step, defer=True)
        if ended is not None:
            turn = self.memory.last_assistant()
            text = ended.final_text or visible_text(turn.content if turn is not None else None)
            yield self._finish(AnswerReady(text or "Done.", plan=ended.plan))

    async def recover_answer(self) -> AnswerReady | None:
        """The answer already in memory when a run is resumed after it was made but not delivered."""
        msgs = self.memory.messages
        if not msgs:
            return None
        tail = msgs[-1]
        if tail.role is Role.ASSISTANT and not tail.tool_calls:
            return AnswerReady(visible_text(tail.content) or "Done.")
        turn = self.memory.last_assistant()
        if tail.role is not Role.TOOL or turn is None or not turn.tool_calls or self.memory.unanswered_calls():
            return None
        results = {m.tool_call_id: m for m in msgs if m.role is Role.TOOL}
        for call in turn.tool_calls:
            tool = self.tools.get(call.function.name)
            done = results.get(call.id)
            if tool is None or not tool.ends_run or done is None or (done.content or "").startswith("Error:"):
                continue
            result = await self.tools.execute(call.function.name, call.function.arguments, self._ctx(call))
            if result.ok:
                text = result.final_text or visible_text(turn.content)
                return AnswerReady(text or "Done.", plan=result.plan)
        return None

    def _ctx(self, call: ToolCall) -> ToolContext:
        return replace(self.context, tool_call_id=call.id)

    def _finish(self, answer: AnswerReady) -> AnswerReady:
        self.answer = answer
        self.state = AgentState.FINISHED
        return answer


def visible_text(content: str | None) -> str:
    """The part of a reply a person should see: no think blocks, the <answer> body when present."""
    text = strip_think(content)
    answer = answer_text(text)
    return answer if answer is not None else text


def _signature(msg: Message) -> tuple[tuple[str, str], ...]:
    calls = msg.tool_calls or []
    return tuple((tc.function.name, _normalise(tc.function.arguments)) for tc in calls)


def _normalise(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments or "{}"), sort_keys=True, ensure_ascii=False)
    except json.JSONDecodeError:
        return arguments.strip()


def _tool_attributes(call: ToolCall) -> dict[str, AttributeValue]:
    return {"tool.name": call.function.name, "tool.call_id": call.id,
            "tool.arguments": summary(call.function.arguments or "")}


def _record_result(s: Span, result: ToolResult) -> None:
    s.set_attributes({"tool.result_chars": len(result.observation()), "tool.ok": result.ok})  # one lock, not two
    if not result.ok:
        s.set_status(Status(StatusCode.ERROR, summary(result.error or "tool failed")))


def _args_for_display(call: ToolCall) -> dict[str, Any]:
    try:
        return call.parsed_arguments()
    except ValueError:
        return {"raw": call.function.arguments[:200]}


__all__ = ["ToolCallAgent", "visible_text"]
