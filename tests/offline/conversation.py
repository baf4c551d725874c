"""A conversation with the offline planner and its Validator, as the bot runs it: each message is
planned (questions answered from the test's list), the answer reviewed by the PlanValidator, and
re-planned with the review's note (origin REVIEW) while it is not satisfied — at most two more
rounds, and never again for a re-plan that returns the same plan (bot.run.driver)."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_core.events import AnswerReady, Verdict
from agent_core.offline import OfflinePlanner
from agent_core.prompts import build_system_prompt
from agent_core.schema import Message, Origin
from bot.run.driver import same_answer
from bot.run.review import PlanValidator, ReviewRequest
from tests.offline.test_offline_planner import NOW, Drive, drive
from tools.collection import ToolCollection
from tools.plan import TripPlan

ROUNDS = 2  # BOT_VALIDATE_ROUNDS' default


@dataclass
class Reply:
    drive: Drive
    verdict: Verdict | None = None
    reviews: int = 0  # how many times the Validator sent it back
    questions: list[str] = field(default_factory=list)

    @property
    def plan(self) -> TripPlan | None:
        return self.drive.plan

    @property
    def text(self) -> str:
        return self.drive.final_text or self.drive.pending or ""


class Conversation:
    def __init__(self, planner: OfflinePlanner, tools: ToolCollection, reviewer: PlanValidator, lang: str) -> None:
        self.planner, self.tools, self.reviewer, self.lang = planner, tools, reviewer, lang
        self.messages: list[Message] = [Message.system(build_system_prompt(lang, NOW, "Asia/Shanghai", None))]
        self.request = ""  # the message that started the run, as the bot keeps it

    async def answer(self, text: str) -> Reply:
        """The person's answer to the question the conversation is paused on."""
        call = next(tc for tc in self.messages[-1].tool_calls or [] if tc.function.name == "ask_human")
        self.messages.append(Message.tool(text, tool_call_id=call.id, name="ask_human"))
        return await self.say(None)

    async def say(self, text: str | None, answers: list[str] | None = None) -> Reply:
        """A message from the person (None: none; the planner goes on after an answer)."""
        if text is not None:
            self.request = text
        d = await drive(self.planner, self.tools, text, answers=list(answers or []), lang=self.lang, messages=self.messages)
        reply = Reply(d, questions=[q for q, _ in d.questions])
        reviewed: AnswerReady | None = None
        while d.plan is not None or d.final_text:
            answer = AnswerReady(d.final_text or "", d.plan)
            if reviewed is not None and same_answer(answer, reviewed):
                break  # the re-plan changed nothing: posted with the review it had
            request = ReviewRequest("s", self.lang, self.request, answer, list(d.messages), reply.reviews)
            outcome = await self.reviewer.review(request)
            reply.verdict = outcome.verdict
            if not outcome.replan_feedback or reply.reviews >= ROUNDS:
                break
            reply.reviews += 1
            reviewed = answer
            d.messages.append(Message.user(f"[review] {outcome.replan_feedback}", origin=Origin.REVIEW))
            d = await drive(self.planner, self.tools, None, lang=self.lang, messages=d.messages)
            reply.drive = d
        self.messages = reply.drive.messages
        return reply


__all__ = ["Conversation", "Reply"]
