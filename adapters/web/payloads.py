"""The web chat's wire shapes: API request and response bodies, and the data of each SSE event.

SSE events and their data (every payload also carries `ts`, epoch seconds when produced):

    step                {step, max_steps, run?}  run: the run's reference (a Stop names it)
    tool                {phase: thought|call|result, step, name?, tool_call_id?, arguments?, ok?, summary?, text?}
    delta               {step, text}             more of the step's visible text as the model writes it
    text_reset          {step}                   the text streamed since the last text_reset is withdrawn:
                                                 the text that follows replaces it (the deltas after the
                                                 last text_reset joined are the text that counts)
    human_input_request {question, session_id, options?, tool_call_id}
    answer              {text, plan?, costs?, places?, run?}  plan = TripPlan.model_dump(); costs: its priced rows
                                                 (tools.plan_costs), worded; places: Chinese name -> the
                                                 name an English plan shows (北京南 -> 北京南 (Beijing South));
                                                 run: the run it ends (a plan's 👍 / 👎 rate it)
    verdict             {label, label_en, reasons, failed_checks, rubric_skipped, rounds, graded, run?}
    error               {message, reason?, retryable}
    notice              {kind, text}             queued, cancelled (also a Stop), status, help, reminder, ...
    done                {steps}
    reset               {last_event_id}          the stream cannot resume exactly: reload the history
"""

from __future__ import annotations

import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from bot.surface import RUN_REF_PATTERN
from tools.plan import TripPlan

SESSION_ID_PATTERN = r"^[A-Za-z0-9_-]{8,64}$"
CLIENT_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"


# Some character Python's str.strip() keeps: the server refuses a message that strips to nothing,
# so the schema says so (JSON Schema's and the regex engines' \s differ from Python's, hence the list)
NOT_BLANK = "[^\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]"


class _Strict(BaseModel):
    # strict: `false` is not a longitude and `0` not a boolean; what the schema says is what is taken
    model_config = ConfigDict(extra="forbid", strict=True)


class LocationIn(_Strict):
    latitude: float = Field(ge=-90, le=90)
    longitude: float = Field(ge=-180, le=180)
    label: str | None = Field(default=None, max_length=200)


class ChatRequest(_Strict):
    message: str = Field(min_length=1, pattern=NOT_BLANK)
    session_id: str | None = Field(default=None, pattern=SESSION_ID_PATTERN)
    client_message_id: str | None = Field(
        default=None, pattern=CLIENT_ID_PATTERN, description="makes a double submit harmless"
    )
    location: LocationIn | None = None
    lang: Literal["zh", "en"] | None = Field(
        default=None, description="the browser's language: replies to commands use it until the conversation has its own"
    )

    @field_validator("message")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("the message must not be blank")
        return v


class LoginRequest(_Strict):
    token: str = Field(min_length=1, max_length=512)


class AuthState(BaseModel):
    required: bool
    authenticated: bool


class ChatResponse(BaseModel):
    session_id: str
    outcome: Literal["accepted", "duplicate"]


class HumanResponseRequest(_Strict):
    session_id: str = Field(pattern=SESSION_ID_PATTERN)
    response: str = Field(min_length=1, pattern=NOT_BLANK)
    client_message_id: str | None = Field(default=None, pattern=CLIENT_ID_PATTERN)
    option: bool = Field(default=False, description="true when the person pressed an option button")
    tool_call_id: str | None = Field(
        default=None, max_length=200,
        description="the question being answered (from human_input_request); 409 when it is no longer waiting",
    )

    @field_validator("response")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("the response must not be blank")
        return v


class HumanResponseAck(BaseModel):
    ok: bool = True
    tool_call_id: str
    outcome: Literal["accepted", "duplicate"]


class CostLineOut(BaseModel):
    kind: Literal["leg", "stay", "ticket"]
    index: int = Field(description="the item's place in plan.legs, the traveller's legs, plan.stays or plan.visits")
    who: str = Field(default="", description="the traveller whose own leg it is; empty: the party's")
    amount: float = Field(description="what the row adds to the total")
    text: str = Field(description="how it counts, in the conversation's language: ¥553 × 2 people = ¥1,106")
    counted: bool = Field(default=False, description="the text counts something out (people, rooms, nights)")


class ShareOut(BaseModel):
    who: str
    amount: float
    text: str


class PlanCostsOut(BaseModel):
    """A plan's rows as the card shows them: they add up to `total`."""

    lines: list[CostLineOut]
    total: float
    text: str = Field(description="the total for the party and for each: ¥2,126 for 2 people (¥1,063 each)")
    shares: list[ShareOut] = Field(default_factory=list, description="a team trip: what each traveller pays")


class HistoryEntryOut(BaseModel):
    role: str
    text: str
    plan: TripPlan | None = None
    costs: PlanCostsOut | None = None
    places: dict[str, str] | None = None
    ts: float | None = None  # when the store records it
    # what the page showed with this answer: from what the session delivered (adapters.web.replay)
    verdict: VerdictData | None = None
    files: list[FileData] = Field(default_factory=list)
    run: str | None = Field(default=None, description="a plan's run: POST /api/sessions/{id}/feedback rates it")
    rating: Literal["up", "down"] | None = Field(default=None, description="the person's rating already given")


class PendingOut(BaseModel):
    tool_call_id: str
    question: str
    options: list[str] = Field(default_factory=list)
    deadline: float | None = None


class ProgressOut(BaseModel):
    """An event of the run working now, for a page that reloads mid-run: its steps stay, and the
    answer being written goes on from where it is instead of starting mid-sentence."""

    event: Literal["step", "tool", "delta"]
    data: StepData | ToolData | DeltaData


class SessionView(BaseModel):
    session_id: str
    state: str  # idle | working | asking | parked (asking, nothing held in memory) | signoff | new (nothing stored yet)
    lang: str | None = None
    entries: list[HistoryEntryOut] = Field(default_factory=list)
    pending: PendingOut | None = None
    run: str | None = Field(default=None, description="the run working now (state `working`): a Stop names it")
    progress: list[ProgressOut] = Field(default_factory=list, description="the working run's events so far")
    last_event_id: str = Field(description="open the event stream after this id to avoid duplicates")
    drawn: list[str] = Field(default_factory=list, description="what the view drew that a delivery may still "
                             "bring (answers by run, files by their link's v): the event stream's `drawn`")


# ------------------------------------------------------------------ SSE event data


class _EventData(BaseModel):
    ts: float = Field(default_factory=time.time)


class StepData(_EventData):
    step: int
    max_steps: int
    run: str | None = None  # the run's reference (bot.surface.run_ref): the page's Stop names it


class DeltaData(_EventData):
    step: int
    text: str


class TextResetData(_EventData):
    step: int  # the step whose streamed text is withdrawn


class StopRequest(_Strict):
    client_message_id: str | None = Field(
        default=None, pattern=CLIENT_ID_PATTERN, description="makes a double press harmless"
    )
    run: str | None = Field(
        default=None, pattern=f"^{RUN_REF_PATTERN}$",
        description="the run to stop (the `run` of its step events, or of the session view): a run that has "
                    "ended stops nothing and the page gets a notice saying so; none: the run working now",
    )


class StopAck(BaseModel):
    outcome: Literal["accepted", "duplicate"]


class ToolData(_EventData):
    phase: Literal["thought", "call", "result"]
    step: int
    name: str | None = None
    tool_call_id: str | None = None
    arguments: dict[str, Any] | None = None  # whatever the model sent: the shape is the tool's
    ok: bool | None = None
    summary: str | None = None
    text: str | None = None


class QuestionData(_EventData):
    question: str
    session_id: str
    tool_call_id: str
    options: list[str] | None = None


class AnswerData(_EventData):
    text: str
    plan: TripPlan | None = None
    costs: PlanCostsOut | None = None
    places: dict[str, str] | None = None
    run: str | None = None  # the run it ends; a plan's: POST /api/sessions/{id}/feedback rates it


class FeedbackRequest(_Strict):
    run: str = Field(pattern=f"^{RUN_REF_PATTERN}$", description="the `run` of the plan's answer event")
    rating: Literal["up", "down"]


class FeedbackAck(BaseModel):
    kept: Literal[True] = True


class VerdictData(_EventData):
    label: str
    label_en: str
    reasons: list[str] = Field(default_factory=list)
    failed_checks: list[str] = Field(default_factory=list)
    rubric_skipped: bool = False
    rounds: int = 1
    graded: bool = True  # False: "not graded" — label and label_en are empty, no label is claimed
    run: str | None = None  # the run whose answer it reviews


class ErrorData(_EventData):
    message: str
    reason: str | None = None
    retryable: bool = False


class FileData(_EventData):
    filename: str
    title: str
    url: str  # GET it (with the page's session or token) to download this file (its `v` names it)


class NoticeData(_EventData):
    kind: str
    text: str


class DoneData(_EventData):
    steps: int


class ResetData(_EventData):
    last_event_id: str
