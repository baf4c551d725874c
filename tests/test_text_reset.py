"""A text the run withdraws is said to be withdrawn (TextReset) before anything replaces it: the
rule itself (agent_core.visible_stream.ShownText), and the runtime end to end (the real agent and
driver, the LLM client streaming from the fake OpenAI server, a recording surface) for the
follow-up that asks for submit_plan and for a review that asks for a better plan."""

from __future__ import annotations

from agent_core.events import (
    AnswerReady,
    Event,
    QuestionAsked,
    StepStarted,
    TextDelta,
    TextReset,
    Thought,
    ToolCalled,
    Verdict,
)
from agent_core.visible_stream import ShownText
from bot.run.review import ReviewOutcome, ReviewRequest
from bot.surface import ChatKey
from tests.fakes.openai_server import FakeOpenAI, reply
from tests.revised_draft import DRAFT, FINAL, after_last_reset, revised_script, revising_tools
from tests.spine_support import RecordingSurface, make_llm, make_settings, msg, plain_prompt

CHAT = ChatKey("test", "c1")


def resets(events: list[Event]) -> list[TextReset]:
    shown = ShownText()
    return [r for r in (shown.see(e) for e in events) if r is not None]


def test_text_streamed_and_not_taken_is_withdrawn_when_the_next_step_starts() -> None:
    assert resets([StepStarted(1, 9), TextDelta(1, "a plan"), StepStarted(2, 9), TextDelta(2, "b")]) == [TextReset(1)]


def test_a_thought_an_answer_or_a_question_is_not_withdrawn() -> None:
    assert resets([StepStarted(1, 9), TextDelta(1, "let me look"), Thought(1, "let me look"),
                   ToolCalled(1, "c", "lookup", {}), StepStarted(2, 9)]) == []
    assert resets([StepStarted(1, 9), TextDelta(1, "x"), ToolCalled(1, "c", "lookup", {}), StepStarted(2, 9)]) == []
    assert resets([StepStarted(1, 9), TextDelta(1, "the answer"), AnswerReady("the answer"), StepStarted(2, 9)]) == []
    assert resets([StepStarted(1, 9), TextDelta(1, "x"), QuestionAsked("q", "when?"), StepStarted(2, 9)]) == []
    assert resets([StepStarted(1, 9), TextDelta(1, ""), StepStarted(2, 9)]) == []  # nothing was shown


def test_an_answer_shown_and_then_not_taken_is_withdrawn_on_request() -> None:
    shown = ShownText()
    for event in (StepStarted(3, 9), TextDelta(3, "first plan"), AnswerReady("first plan")):
        assert shown.see(event) is None
    assert shown.withdraw() == TextReset(3)
    assert shown.withdraw() is None  # once: nothing is on screen any more


def pieces(surface: RecordingSurface) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for event in surface.of("progress", CHAT):
        if isinstance(event, TextDelta):
            out.append(("delta", event.text))
        elif isinstance(event, TextReset):
            out.append(("text_reset", ""))
    return out


async def test_the_submit_plan_follow_up_withdraws_the_draft_before_the_revision_streams(tmp_path) -> None:
    from adapters.runtime import build_runtime

    surface = RecordingSurface()
    async with FakeOpenAI(revised_script()) as llm:
        runtime = build_runtime(make_settings(tmp_path), model=make_llm(llm.base_url), tools=revising_tools(),
                                prompt=plain_prompt, serve_http=False, extra_surfaces=[surface])
        await runtime.start()
        try:
            await runtime.manager.submit(msg(CHAT, "Hangzhou to Beijing, one night"))
            await surface.wait_count("answer", 1)
        finally:
            await runtime.stop()
        llm.assert_complete()
    events = surface.of("progress", CHAT)
    [reset] = [e for e in events if isinstance(e, TextReset)]
    at = events.index(reset)
    assert "".join(e.text for e in events[:at] if isinstance(e, TextDelta) and e.step == reset.step) == DRAFT
    assert isinstance(events[at + 1], StepStarted) and events[at + 1].step == reset.step + 1  # before the next step
    [answer] = surface.of("answer", CHAT)
    assert answer.text == FINAL and after_last_reset(pieces(surface)) == FINAL  # the deltas that count are the answer


class AskOnce:
    """A reviewer that sends the first answer back once with a finding, then takes the next."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def review(self, request: ReviewRequest) -> ReviewOutcome:
        self.seen.append(request.answer.text)
        if request.round == 0:
            return ReviewOutcome(Verdict("一般", "Fair", ("the hotel is missing",)), "add a hotel")
        return ReviewOutcome(Verdict("非常满意", "Very satisfied"))


async def test_a_review_that_asks_for_a_better_plan_withdraws_the_answer_it_was_shown(tmp_path) -> None:
    from adapters.runtime import build_runtime

    reviewer = AskOnce()
    surface = RecordingSurface()
    script = [reply("<answer>Take G1 at 08:00.</answer>", chunk_chars=4),
              reply("<answer>Take G1 at 08:00; sleep at Grand Lotus.</answer>", chunk_chars=4)]
    async with FakeOpenAI(script) as llm:
        runtime = build_runtime(make_settings(tmp_path, validate_plans=True), model=make_llm(llm.base_url),
                                tools=revising_tools(), prompt=plain_prompt, serve_http=False,
                                extra_surfaces=[surface], reviewer=reviewer)
        await runtime.start()
        try:
            await runtime.manager.submit(msg(CHAT, "Beijing, one night"))
            await surface.wait_count("answer", 1)
        finally:
            await runtime.stop()
    assert reviewer.seen == ["Take G1 at 08:00.", "Take G1 at 08:00; sleep at Grand Lotus."]
    assert [p for p in pieces(surface) if p[0] == "text_reset"] == [("text_reset", "")]
    [answer] = surface.of("answer", CHAT)
    assert answer.text == "Take G1 at 08:00; sleep at Grand Lotus." == after_last_reset(pieces(surface))
