"""The operator's page at /admin: what waits, what failed, what runs cost, each chat's transcript.

Server-rendered HTML (no script), served by the bot's HTTP server only when BOT_ADMIN_TOKEN is
set; every request needs the token, as `Authorization: Bearer <token>` or the HttpOnly cookie
the page's form sets (SameSite=Strict, so another site cannot make a browser press "retry").

What it shows is read from the store when the page is asked for: open chats with their state,
questions waiting (oldest first, with their age and deadline), failed deliveries with their
reason and a retry button, recent runs with steps, tokens and cost, the latest 👍 / 👎 on plans
(who, which run, when, and the counts), a chat's transcript.
"Retry" puts the row back in the queue and wakes the chat's delivery lane.
"""

from __future__ import annotations

import hmac
import html
import time
from collections.abc import Callable, Sequence
from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from agent_core.schema import Message
from bot.settings import Settings
from bot.store.base import FeedbackRow, OutboxRow, QuestionRow, RunRow, SessionRow, Store

COOKIE = "tripbot_admin"
CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'"
SHOWN = 100  # rows per table
_STYLE = """body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse;margin:.5em 0 1.5em}
td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}th{background:#f3f3f3}
.num{text-align:right}.role{font-weight:bold}pre{white-space:pre-wrap;margin:0;max-width:60em}"""


def ago(seconds: float) -> str:
    s = int(max(0, seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h {s % 3600 // 60:02d}m"
    return f"{s // 86400}d {s % 86400 // 3600}h"


def _e(value: object) -> str:
    return html.escape(str(value))


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], empty: str) -> str:
    if not rows:
        return f"<p><i>{_e(empty)}</i></p>"
    th = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><tr>{th}</tr>{body}</table>"


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    doc = (f"<!doctype html><html><head><meta charset=utf-8><title>{_e(title)}</title>"
           f"<style>{_STYLE}</style></head><body>{body}</body></html>")
    return HTMLResponse(doc, status_code=status, headers={"Content-Security-Policy": CSP, "Cache-Control": "no-store"})


class AdminPage:
    def __init__(self, settings: Settings, store: Store, redeliver: Callable[[str], None],
                 clock: Callable[[], float] = time.time,
                 outages: Callable[[], dict[str, tuple[int, float | None]]] = dict) -> None:
        assert settings.admin_token, "the page is served only with BOT_ADMIN_TOKEN"
        self._token = settings.admin_token.encode()
        self.store = store
        self.redeliver = redeliver  # wake the chat's delivery lane (SessionManager.redeliver)
        self.clock = clock
        self.outages = outages  # platforms deliveries wait for (SessionManager.platform_outages)

    def router(self) -> APIRouter:
        r = APIRouter(include_in_schema=False)
        r.add_api_route("/admin", self.overview, methods=["GET"])
        r.add_api_route("/admin/login", self.login, methods=["POST"])
        r.add_api_route("/admin/sessions/{session_id}", self.transcript, methods=["GET"])
        r.add_api_route("/admin/deliveries/{outbox_id}/retry", self.retry, methods=["POST"])
        return r

    # -- the token ---------------------------------------------------------------------------
    def _allowed(self, request: Request) -> bool:
        given = request.cookies.get(COOKIE, "")
        header = request.headers.get("authorization", "")
        if header[:7].lower() == "bearer ":
            given = header[7:].strip()
        return bool(given) and hmac.compare_digest(given.encode(), self._token)

    def _refused(self, note: str = "") -> HTMLResponse:
        form = ('<form method=post action="/admin/login"><label>Admin token <input type=password name=token '
                'autocomplete=current-password></label> <button>Open</button></form>')
        return _page("tripbot admin", f"<h1>Operator's page</h1><p>{_e(note)}</p>{form}", status=401)

    async def login(self, request: Request) -> Response:
        fields = parse_qs((await request.body()).decode("utf-8", "replace"))
        token = (fields.get("token") or [""])[0].strip()
        if not hmac.compare_digest(token.encode(), self._token):
            return self._refused("Wrong token.")
        done = RedirectResponse("/admin", status_code=303)
        done.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/admin",
                        secure=request.url.scheme == "https")
        return done

    # -- pages -------------------------------------------------------------------------------
    async def overview(self, request: Request) -> Response:
        if not self._allowed(request):
            return self._refused("This page needs BOT_ADMIN_TOKEN.")
        now = self.clock()
        sessions = await self.store.open_sessions(SHOWN)
        chat_of = {s.id: s.chat_key for s in sessions}
        questions = sorted(await self.store.waiting_questions(), key=lambda q: q.asked_at)[:SHOWN]
        failed = await self.store.failed_deliveries(SHOWN)
        runs = await self.store.recent_runs(SHOWN)
        feedback = await self.store.recent_feedback(SHOWN)
        ups = sum(f.rating == "up" for f in feedback)
        outages = self.outages()
        body = "".join([
            "<h1>Operator's page</h1>",
            *([f"<h2 id=outages>Waiting for a platform to come back ({len(outages)})</h2>",
               _table(["platform", "chats waiting", "unreachable for"],
                      [[_e(name), str(waiting), ago(now - since) if since else "?"]
                       for name, (waiting, since) in sorted(outages.items())], "")] if outages else []),
            f"<h2 id=questions>Questions waiting ({len(questions)})</h2>",
            _table(["chat", "question", "waiting for", "deadline"],
                   [self._question_row(q, chat_of, now) for q in questions], "No question is waiting."),
            f"<h2 id=failed>Failed deliveries ({len(failed)})</h2>",
            _table(["chat", "kind", "reason", "attempts", "queued", ""],
                   [self._failed_row(o, now) for o in failed], "No delivery has failed."),
            "<h2 id=runs>Recent runs</h2>",
            _table(["chat", "run", "model", "segments", "steps", "tokens in / out", "calls", "cost (USD)", "outcome",
                    "last change"], [self._run_row(r, now) for r in runs], "No run yet."),
            f"<h2 id=feedback>Feedback on plans (👍 {ups} · 👎 {len(feedback) - ups})</h2>",
            _table(["chat", "run", "rating", "by", "when"], [self._feedback_row(f, now) for f in feedback],
                   "No plan has been rated yet."),
            f"<h2 id=chats>Chats ({len(sessions)})</h2>",
            _table(["chat", "state", "runs", "steps", "tokens in / out", "cost (USD)", "last change"],
                   [self._chat_row(s, now) for s in sessions], "No open chat."),
        ])
        return _page("tripbot admin", body)

    async def transcript(self, request: Request, session_id: str) -> Response:
        if not self._allowed(request):
            return self._refused("This page needs BOT_ADMIN_TOKEN.")
        session = await self.store.session_by_id(session_id)
        if session is None:
            return _page("not found", "<p>No such session. <a href='/admin'>Back</a></p>", status=404)
        rows = [_message_row(m) for m in await self.store.load_messages(session_id)]
        head = (f"<p><a href='/admin'>Back</a></p><h1>{_e(session.chat_key)}</h1>"
                f"<p>state {_e(session.state)}, run {session.run_no}, {session.llm_calls} model calls, "
                f"{session.prompt_tokens} / {session.completion_tokens} tokens, ${session.cost_usd:.4f}</p>")
        return _page(f"transcript {session.chat_key}", head + _table(["role", "content"], rows, "No message."))

    async def retry(self, request: Request, outbox_id: int) -> Response:
        if not self._allowed(request):
            return self._refused("This page needs BOT_ADMIN_TOKEN.")
        chat_key = await self.store.retry_outbox(outbox_id)
        if chat_key is not None:
            self.redeliver(chat_key)
        return RedirectResponse("/admin#failed", status_code=303)

    # -- rows --------------------------------------------------------------------------------
    def _question_row(self, q: QuestionRow, chat_of: dict[str, str], now: float) -> list[str]:
        chat = chat_of.get(q.session_id, q.session_id)
        left = q.deadline - now
        return [_chat_link(q.session_id, chat), f"<pre>{_e(q.question)}</pre>", _e(ago(now - q.asked_at)),
                _e(f"in {ago(left)}" if left > 0 else "passed")]

    def _failed_row(self, o: OutboxRow, now: float) -> list[str]:
        if o.kind == "question":
            action = "<i>its run stopped</i>"
        else:
            action = (f"<form method=post action='/admin/deliveries/{o.id}/retry'>"
                      f"<button name=retry value={o.id}>retry</button></form>")
        return [_chat_link(o.session_id, o.chat_key), _e(o.kind), f"<pre>{_e(o.error or '?')}</pre>",
                f"<span class=num>{o.attempts}</span>", _e(ago(now - o.created_at) + " ago"), action]

    def _run_row(self, r: RunRow, now: float) -> list[str]:
        return [_chat_link(r.session_id, r.chat_key), str(r.run_no), _e(r.model), str(r.segments), str(r.steps),
                f"{r.prompt_tokens} / {r.completion_tokens}", str(r.llm_calls), f"{r.cost_usd:.4f}", _e(r.outcome),
                _e(ago(now - r.updated_at) + " ago")]

    def _feedback_row(self, f: FeedbackRow, now: float) -> list[str]:
        return [_chat_link(f.session_id, f.chat_key), str(f.run_no), "👍" if f.rating == "up" else "👎", _e(f.user_id),
                _e(ago(now - f.at) + " ago")]

    def _chat_row(self, s: SessionRow, now: float) -> list[str]:
        return [_chat_link(s.id, s.chat_key), _e(s.state), str(s.run_no), str(s.run_steps),
                f"{s.prompt_tokens} / {s.completion_tokens}", f"{s.cost_usd:.4f}", _e(ago(now - s.updated_at) + " ago")]


def _chat_link(session_id: str, chat_key: str) -> str:
    return f"<a href='/admin/sessions/{_e(session_id)}'>{_e(chat_key)}</a>"


def _message_row(m: Message) -> list[str]:
    text = m.content or ""
    for call in m.tool_calls or ():
        text += f"\n→ {call.function.name}({call.function.arguments})"
    role = m.role.value + (f" {m.name}" if m.name else "")
    return [f"<span class=role>{_e(role)}</span>", f"<pre>{_e(text.strip())}</pre>"]
