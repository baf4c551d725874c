"use strict";
(() => {
  const T = {
    en: {
      title: "Trip planner", new: "New trip", send: "Send", answer: "Answer", stop: "Stop",
      placeholder: "Where to, and when?",
      placeholderAnswer: "Your answer…", placeholderBusy: "Working on it…",
      empty: "Tell me where and when you want to travel, e.g. “Beijing to Shanghai next Friday, 2 nights”. I search trains, flights and hotels and build a plan. /help lists the commands.",
      question: "Question for you", you: "You",
      waiting: (n) => `${n} step${n === 1 ? "" : "s"} so far · waiting for your answer`,
      answeredSteps: (n) => `${n} step${n === 1 ? "" : "s"} · then your answer`,
      working: "Working", done: (n) => `Done in ${n} step${n === 1 ? "" : "s"}`, stopped: "Stopped",
      step: (s, m) => `Step ${s}${m ? " / " + m : ""}`, thinking: "Thinking", failed: "Failed",
      verdict: "Review", reasons: "Why", connecting: "Reconnecting…", connected: "",
      locOn: "Your location will be sent with the next message.", locOff: "Share my location",
      locFail: "Location unavailable.", locAsk: "Getting your location…",
      sendFail: "Could not send. Check the connection and try again.", answered: "Answered",
      refused: "This bot is not open to you.",
      asText: "Plan as text", copy: "Copy as text", copied: "Copied",
      rateUp: "This plan helps", rateDown: "This plan does not help", rated: "Thanks for the feedback!",
      limited: (n) => `Too many messages. Please wait ${n} s and try again.`,
      token: "Access token", unlock: "Unlock", tokenWrong: "That token is not right.", tokenNeeded: "This bot needs its access token (BOT_WEB_TOKEN).",
    },
    zh: {
      title: "行程规划助手", new: "新行程", send: "发送", answer: "回答", stop: "停止",
      placeholder: "去哪儿？哪天出发？",
      placeholderAnswer: "你的回答…", placeholderBusy: "正在规划…",
      empty: "告诉我你想什么时候去哪里，例如“下周五北京去上海，住两晚”。我会查火车、航班和酒店，为你做出行计划。发送 /help 查看命令。",
      question: "需要你确认", you: "你",
      waiting: (n) => `已进行 ${n} 步 · 等待你的回答`, answeredSteps: (n) => `${n} 步 · 之后收到你的回答`,
      working: "进行中", done: (n) => `已完成，共 ${n} 步`, stopped: "已停止",
      step: (s, m) => `第 ${s}${m ? " / " + m : ""} 步`, thinking: "思考", failed: "失败",
      verdict: "评审", reasons: "理由", connecting: "正在重新连接…", connected: "",
      locOn: "下一条消息会附带你的位置。", locOff: "共享我的位置",
      locFail: "无法获取位置。", locAsk: "正在获取位置…",
      sendFail: "发送失败，请检查网络后重试。", answered: "已回答",
      refused: "你没有使用此机器人的权限。",
      asText: "文字版行程", copy: "复制文字版", copied: "已复制",
      rateUp: "这份行程有帮助", rateDown: "这份行程没帮上忙", rated: "谢谢你的反馈！",
      limited: (n) => `消息发得太快了，请 ${n} 秒后再试。`,
      token: "访问令牌", unlock: "解锁", tokenWrong: "令牌不正确。", tokenNeeded: "此机器人需要访问令牌（BOT_WEB_TOKEN）。",
    },
  };
  const lang = (navigator.languages && navigator.languages[0] || navigator.language || "en").toLowerCase().startsWith("zh") ? "zh" : "en";
  const t = T[lang];
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  document.title = t.title;

  const $ = (id) => document.getElementById(id);
  const logEl = $("log"), scroller = $("scroller"), input = $("input"), sendBtn = $("send"),
        form = $("form"), hint = $("hint"), statusEl = $("status"), locBtn = $("loc"),
        loginForm = $("login"), tokenInput = $("token");
  $("title").textContent = t.title;
  $("new").textContent = t.new;
  const stopBtn = $("stop");
  stopBtn.textContent = t.stop;
  $("empty").textContent = t.empty;
  $("unlock").textContent = t.unlock;
  tokenInput.placeholder = t.token;
  tokenInput.setAttribute("aria-label", t.token);
  locBtn.title = t.locOff;
  locBtn.setAttribute("aria-label", t.locOff);

  const KEY = "travelbot.session";
  // A command (one every surface shares, or one nobody has: the help says so) gets a notice
  // back, never a run; the server reads a command the same way (bot/chat/commands.py).
  const COMMAND = /^\/[a-z][a-z0-9_]*(@\S+)?(\s|$)/i;
  const state = {
    sessionId: localStorage.getItem(KEY) || null,
    source: null,
    pending: null,      // {question, tool_call_id, options, el}
    busy: false,
    timeline: null,     // {details, list, summary, steps}
    waitingTimeline: null, // the closed timeline whose header says it waits for the answer
    location: null,
    draft: null,        // {step, el}: the answer as the model writes it (delta events)
    run: null,          // the run working now, as its step events name it: the Stop names it
  };

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }
  const SVG = "http://www.w3.org/2000/svg";
  function icon(name) {
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("class", "icon");
    svg.setAttribute("aria-hidden", "true");
    const use = document.createElementNS(SVG, "use");
    use.setAttribute("href", "#i-" + name);
    svg.appendChild(use);
    return svg;
  }
  function withIcon(tag, cls, name, text) {
    const node = el(tag, cls);
    node.append(icon(name), text);
    return node;
  }
  function showWelcome() {
    const p = el("p", "empty", t.empty);
    p.id = "empty";
    logEl.replaceChildren(p);
  }
  function append(node) {
    const empty = $("empty");
    if (empty) empty.remove();
    const nearBottom = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 120;
    logEl.appendChild(node);
    if (nearBottom) scroller.scrollTop = scroller.scrollHeight;
    return node;
  }
  function clientId() {
    if (window.crypto && crypto.getRandomValues) {
      const b = new Uint8Array(12);
      crypto.getRandomValues(b);
      return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
    }
    return Date.now().toString(36) + Math.random().toString(36).slice(2);
  }
  const cleanText = (s) => String(s || "").replace(/<\/?answer>/gi, "").trim();

  // ---------------------------------------------------------------- input state
  function refreshInput() {
    const answering = !!state.pending;
    const locked = state.busy && !answering;
    input.disabled = locked;
    sendBtn.disabled = locked;
    input.classList.toggle("answering", answering);
    input.placeholder = answering ? t.placeholderAnswer : locked ? t.placeholderBusy : t.placeholder;
    sendBtn.textContent = answering ? t.answer : t.send;
    if (!locked && loginForm.hidden) input.focus({ preventScroll: true });
  }
  function setBusy(busy) {
    state.busy = busy;
    if (!busy) state.run = null;  // the next Stop is for whatever runs next
    stopBtn.hidden = !busy;
    stopBtn.disabled = false;
    statusEl.replaceChildren();
    if (busy) { statusEl.append(el("span", "spinner"), " " + t.working); }
    refreshInput();
  }

  // ---------------------------------------------------------------- rendering
  function addUser(text) { append(el("div", "msg user", text)); }
  function addNotice(text, kind) {
    const cls = kind === "error" ? "msg error" : kind === "limited" ? "msg limited" : "msg notice";
    append(el("div", cls, text));
  }

  function timeline() {
    if (state.timeline) return state.timeline;
    const details = el("details", "timeline");
    details.open = true;
    const summary = el("summary", null);
    summary.append(el("span", "spinner"), " " + t.working);
    const list = el("ol");
    details.append(summary, list);
    append(details);
    state.timeline = { details, list, summary, steps: 0 };
    return state.timeline;
  }
  function closeTimeline(text) {
    if (!state.timeline) return;
    const tl = state.timeline;
    state.timeline = null;
    if (!tl.steps && !tl.list.children.length) { tl.details.remove(); return; } // nothing happened in it
    tl.summary.textContent = text;
    tl.details.open = false;
  }
  function settleWaitingTimeline() {
    // The run went on after the answer: the old header must not keep saying it waits.
    const w = state.waitingTimeline;
    if (!w) return;
    w.summary.textContent = t.answeredSteps(w.steps);
    state.waitingTimeline = null;
  }
  function addStep(d) {
    const tl = timeline();
    tl.steps += 1;
    tl.list.appendChild(el("li", "step", t.step(d.step, d.max_steps)));
    tl.summary.replaceChildren(el("span", "spinner"), " " + t.step(d.step, d.max_steps));
    scroller.scrollTop = scroller.scrollHeight;
  }
  function shortArgs(args) {
    if (!args) return "";
    const parts = Object.entries(args).filter(([, v]) => v !== null && v !== "" && typeof v !== "object").map(([k, v]) => `${k}=${v}`);
    const s = parts.join(", ");
    return s.length > 140 ? s.slice(0, 139) + "…" : s;
  }
  function addTool(d) {
    const tl = timeline();
    let li;
    if (d.phase === "thought") li = withIcon("li", "thought", "thought", d.text);
    else if (d.phase === "call") li = withIcon("li", "call", "tool", `${d.name}(${shortArgs(d.arguments)})`);
    else li = withIcon("li", d.ok ? "result" : "fail", d.ok ? "ok" : "fail", `${d.name}: ${d.summary || ""}`);
    tl.list.appendChild(li);
  }

  function addQuestion(q, answered) {
    const box = el("div", "question");
    box.setAttribute("role", "alert");
    box.append(el("div", "q-label", t.question), el("div", "q-text", q.question));
    if (q.options && q.options.length && !answered) {
      const opts = el("div", "options");
      for (const o of q.options) {
        const b = el("button", "option", o);
        b.type = "button";
        b.addEventListener("click", () => sendAnswer(o, true));
        opts.appendChild(b);
      }
      box.appendChild(opts);
    }
    if (answered) box.classList.add("answered");
    append(box);
    scroller.scrollTop = scroller.scrollHeight;
    return box;
  }
  function askPending(q) {
    if (state.pending && state.pending.tool_call_id === q.tool_call_id) return;
    const box = addQuestion(q, false);
    state.pending = { question: q.question, tool_call_id: q.tool_call_id, options: q.options || [], el: box };
    refreshInput();
  }
  function markAnswered(text) {
    const p = state.pending;
    if (!p) return;
    p.el.classList.add("answered");
    p.el.querySelectorAll("button.option").forEach((b) => { b.disabled = true; });
    p.el.appendChild(el("div", "answer-echo", `${t.answered}: ${text}`));
    state.pending = null;
  }
  function dropPending() {
    const p = state.pending;
    if (!p) return;
    p.el.classList.add("answered");
    p.el.querySelectorAll("button.option").forEach((b) => { b.disabled = true; });
    state.pending = null;
  }

  function planText(body) {
    // The text stays for copying (and is what surfaces without cards show), folded away.
    const actions = el("div", "plan-actions");
    const copy = el("button", "copy");
    copy.type = "button";
    copy.append(icon("copy"), t.copy);
    copy.addEventListener("click", async () => {
      try { await navigator.clipboard.writeText(body); copy.lastChild.textContent = t.copied; } catch (_) { details.open = true; }
    });
    const details = el("details", "plan-text");
    details.append(el("summary", null, t.asText), el("pre", null, body));
    actions.append(copy, details);
    return actions;
  }
  function feedbackPair(run, given) {
    // Thumbs up / down under a plan (icons, not emoji): the person's latest press is kept with the plan's run;
    // `given` (after a reload) is the press already kept, shown pressed.
    const box = el("div", "plan-feedback");
    const note = el("span", "note", "");
    for (const [rating, label] of [["up", t.rateUp], ["down", t.rateDown]]) {
      const b = el("button", "rate");
      b.type = "button";
      b.append(icon(rating));
      b.dataset.rating = rating;
      b.title = label;
      b.setAttribute("aria-label", label);
      if (given) b.setAttribute("aria-pressed", String(given === rating));
      b.addEventListener("click", async () => {
        try {
          const ack = await post(`/api/sessions/${encodeURIComponent(state.sessionId)}/feedback`, { run, rating });
          if (!ack) return;
          for (const other of box.querySelectorAll("button.rate")) other.setAttribute("aria-pressed", String(other === b));
          note.textContent = t.rated;
        } catch (_) { note.textContent = t.sendFail; }
      });
      box.append(b);
    }
    box.append(note);
    return box;
  }
  function addAnswer(text, plan, costs, places, run, rating) {
    const body = cleanText(text);
    if (plan) {
      const card = PlanCard.render(plan, costs, places, lang);
      if (body) card.append(planText(body));
      if (run) card.append(feedbackPair(run, rating));
      append(card);
    } else if (body) append(el("div", "msg assistant", body));
  }
  function addVerdict(v) {
    const label = lang === "zh" ? v.label : (v.label_en || v.label);
    const good = (v.label || "").startsWith("非常满意");
    const poor = (v.label || "").startsWith("不满意");
    const badge = withIcon("div", "verdict" + (good ? " good" : poor ? " poor" : ""), good ? "good" : poor ? "warn" : "info", `${t.verdict}: ${label}`);
    append(badge);
    if (v.reasons && v.reasons.length) {
      const d = el("details", "verdict-reasons");
      d.append(el("summary", null, t.reasons));
      const ul = el("ul");
      for (const r of v.reasons) ul.appendChild(el("li", null, r));
      d.append(ul);
      append(d);
    }
  }

  function addFile(d) {
    const link = el("a", "file", "📎 " + d.filename);
    link.href = d.url;
    link.download = d.filename;
    append(link);
  }

  function addDelta(d) {
    // One element per step: a step whose text turns out to be a thought (tool calls follow)
    // or the answer (the answer event follows) gives it up then. A withdrawn text's element
    // (text_reset) takes the next step's text in its place.
    if (state.draft && state.draft.reset) {
      state.draft.step = d.step;
      state.draft.reset = false;
    }
    if (!state.draft || state.draft.step !== d.step) {
      dropDraft();
      state.draft = { step: d.step, el: append(el("div", "msg assistant streaming", "")) };
    }
    const nearBottom = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 120;
    state.draft.el.textContent += d.text;
    if (nearBottom) scroller.scrollTop = scroller.scrollHeight;
  }
  function resetDraft(d) {
    // the text so far is withdrawn: the element stays, empty, for the text that replaces it
    if (!state.draft || state.draft.step !== d.step) return;
    state.draft.el.textContent = "";
    state.draft.reset = true;
  }
  function dropDraft() {
    if (state.draft) state.draft.el.remove();
    state.draft = null;
  }
  function keepDraft() {
    // the run ended without an answer (stopped, or the model broke off): what was written stays
    if (state.draft) state.draft.el.classList.replace("streaming", "cut");
    state.draft = null;
  }

  // ---------------------------------------------------------------- the event stream
  const ENDS_RUN = new Set(["cancelled", "new"]);
  function onNotice(d) {
    addNotice(d.text, d.kind);
    if (ENDS_RUN.has(d.kind)) {
      // /cancel, /stop or /new: the run (and any question) is over; a Stop's notice repeats
      // what was written, so the draft goes
      dropDraft();
      closeTimeline(t.stopped);
      dropPending();
      settleWaitingTimeline();
      setBusy(false);
    } else if (d.kind !== "queued" && state.busy && (!state.timeline || !state.timeline.steps)) {
      // a message that started no run (refused, invalid, too many, ...): nothing is working
      closeTimeline("");
      setBusy(false);
    }
  }
  const handlers = {
    step: (d) => { setBusy(true); state.run = d.run || null; addStep(d); },
    delta: (d) => { setBusy(true); addDelta(d); },
    text_reset: (d) => resetDraft(d),
    tool: (d) => { setBusy(true); dropDraft(); addTool(d); },
    human_input_request: (d) => {
      if (state.timeline) {
        const tl = state.timeline;
        closeTimeline(t.waiting(tl.steps));
        if (tl.details.isConnected) state.waitingTimeline = tl;
      }
      askPending(d);
      setBusy(false);
    },
    answer: (d) => { settleWaitingTimeline(); dropDraft(); addAnswer(d.text, d.plan, d.costs, d.places, d.run); },
    verdict: (d) => addVerdict(d),
    file: (d) => addFile(d),
    error: (d) => { settleWaitingTimeline(); keepDraft(); closeTimeline(t.failed); addNotice(d.message, "error"); setBusy(false); },
    notice: onNotice,
    done: (d) => {
      settleWaitingTimeline();
      if (state.timeline) closeTimeline(t.done(d.steps));
      setBusy(false);
    },
    reset: () => reload(),
  };
  function connect(after, drawn) {
    // `drawn`: what the reload drew that a delivery may still bring; the stream skips it
    if (state.source) state.source.close();
    const params = new URLSearchParams();
    if (after) params.set("after", after);
    if (drawn && drawn.length) params.set("drawn", drawn.join(","));
    const q = params.toString() ? "?" + params.toString() : "";
    const es = new EventSource(`/api/sessions/${encodeURIComponent(state.sessionId)}/events${q}`);
    for (const [name, fn] of Object.entries(handlers)) {
      es.addEventListener(name, (ev) => {
        let data = {};
        try { data = JSON.parse(ev.data); } catch (_) { return; }
        fn(data);
      });
    }
    es.onopen = () => { hint.textContent = state.location ? t.locOn : ""; };
    es.onerror = () => {
      hint.textContent = t.connecting;
      // The browser retries by itself unless the server answered with an error status.
      if (es.readyState === EventSource.CLOSED && state.source === es) setTimeout(reload, 3000);
    };
    state.source = es;
  }

  // ---------------------------------------------------------------- access token
  function needToken(message) {
    form.hidden = true;
    loginForm.hidden = false;
    hint.textContent = message || t.tokenNeeded;
    tokenInput.focus();
  }
  loginForm.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const token = tokenInput.value.trim();
    if (!token) return;
    const res = await fetch("/api/login", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ token }) });
    if (res.status === 429) { hint.textContent = t.limited(res.headers.get("Retry-After") || "60"); return; }
    if (!res.ok) { hint.textContent = t.tokenWrong; tokenInput.select(); return; }
    tokenInput.value = "";
    loginForm.hidden = true;
    form.hidden = false;
    hint.textContent = "";
    refreshInput();
    if (state.sessionId) reload();
  });

  // ---------------------------------------------------------------- history (reload)
  async function reload() {
    if (!state.sessionId) return;
    let view;
    try {
      const res = await fetch(`/api/sessions/${encodeURIComponent(state.sessionId)}`);
      if (res.status === 404) { resetSession(); return; }
      if (res.status === 401) { needToken(); return; }
      if (!res.ok) throw new Error(String(res.status));
      view = await res.json();
    } catch (_) {
      hint.textContent = t.connecting;
      setTimeout(reload, 2000);
      return;
    }
    logEl.replaceChildren();
    state.timeline = null;
    state.waitingTimeline = null;
    state.pending = null;
    // The pending question is drawn live below; skip its copy in the history.
    let skip = -1;
    if (view.pending) {
      for (let i = view.entries.length - 1; i >= 0; i--) {
        if (view.entries[i].role === "question") { if (view.entries[i].text === view.pending.question) skip = i; break; }
      }
    }
    view.entries.forEach((e, i) => {
      if (i === skip) return;
      if (e.role === "user") addUser(e.text);
      else if (e.role === "question") addQuestion({ question: e.text }, true);
      else if (e.role === "answer") append(el("div", "msg user", e.text));
      else if (e.role === "notice") addNotice(e.text);
      else {
        // the review, the file links and the 👍 / 👎 (as pressed) shown with the answer come back with it
        addAnswer(e.text, e.plan, e.costs, e.places, e.run, e.rating);
        if (e.verdict) addVerdict(e.verdict);
        for (const f of e.files || []) addFile(f);
      }
    });
    if (view.pending) askPending(view.pending);
    if (!logEl.children.length) showWelcome();
    setBusy(view.state === "working");
    state.run = view.run || null;
    state.draft = null;
    if (state.busy) {
      // the run's steps so far, and the answer as far as it is written: the stream goes on from there
      for (const p of view.progress || []) if (handlers[p.event]) handlers[p.event](p.data);
      timeline();
    }
    connect(view.last_event_id, view.drawn);
  }
  function resetSession() {
    if (state.source) state.source.close();
    state.source = null;
    state.sessionId = null;
    localStorage.removeItem(KEY);
    state.pending = null;
    state.timeline = null;
    state.waitingTimeline = null;
    state.draft = null;
    showWelcome();
    setBusy(false);
  }

  // ---------------------------------------------------------------- sending
  async function post(path, body) {
    const res = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    if (res.status === 403) { addNotice(t.refused, "error"); return null; }
    if (res.status === 401) { needToken(); return null; }
    if (res.status === 429) {
      addNotice(t.limited(res.headers.get("Retry-After") || "60"), "limited");
      return null;
    }
    if (!res.ok) throw Object.assign(new Error(String(res.status)), { status: res.status });
    return res.json();
  }
  function sessionForSending() {
    // The page names a new session itself, so messages sent before the first answer arrives
    // all land in the same conversation.
    if (!state.sessionId) {
      state.sessionId = clientId();
      localStorage.setItem(KEY, state.sessionId);
    }
    return state.sessionId;
  }
  function listen(sessionId) {
    if (sessionId !== state.sessionId) {
      state.sessionId = sessionId;
      localStorage.setItem(KEY, sessionId);
      connect(null);
    } else if (!state.source) connect(null);
  }
  async function sendCommand(text) {
    // A command gets a notice back, never a run: nothing is locked while it is answered.
    addUser(text);
    const body = { message: text, client_message_id: clientId(), lang, session_id: sessionForSending() };
    try {
      const out = await post("/api/chat", body);
      if (out) listen(out.session_id);
    } catch (_) {
      addNotice(t.sendFail, "error");
    }
  }
  async function sendMessage(text) {
    const body = { message: text, client_message_id: clientId(), lang, session_id: sessionForSending() };
    if (state.location) body.location = state.location;
    addUser(text);
    setBusy(true);
    timeline();
    try {
      const out = await post("/api/chat", body);
      if (!out) { closeTimeline(""); setBusy(false); return; }
      state.location = null;
      locBtn.classList.remove("on");
      listen(out.session_id);
    } catch (_) {
      addNotice(t.sendFail, "error");
      closeTimeline("");
      setBusy(false);
    }
  }
  function restorePending(p) {
    state.pending = p;
    p.el.classList.remove("answered");
    p.el.querySelectorAll(".answer-echo").forEach((n) => n.remove());
    p.el.querySelectorAll("button.option").forEach((b) => { b.disabled = false; });
  }
  async function sendAnswer(text, option) {
    const p = state.pending;
    if (!p) return;
    markAnswered(text);
    setBusy(true);
    timeline();
    try {
      const out = await post("/api/human_response", { session_id: state.sessionId, response: text, option: !!option, client_message_id: clientId(), tool_call_id: p.tool_call_id });
      if (!out) { closeTimeline(""); restorePending(p); setBusy(false); }
    } catch (e) {
      if (e.status === 409 || e.status === 404) { reload(); return; }
      addNotice(t.sendFail, "error");
      closeTimeline("");
      restorePending(p);
      setBusy(false);
    }
  }
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    input.value = "";
    input.style.height = "";
    if (COMMAND.test(text)) sendCommand(text);
    else if (state.pending) sendAnswer(text, false);
    else sendMessage(text);
  });
  input.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) { ev.preventDefault(); form.requestSubmit(); }
  });
  input.addEventListener("input", () => { input.style.height = ""; input.style.height = Math.min(input.scrollHeight, 144) + "px"; });
  $("new").addEventListener("click", async () => {
    // the old trip is closed on the server too: its question stops waiting (and leaves /admin)
    const old = state.sessionId;
    resetSession();
    if (old) {
      try { await post("/api/chat", { message: "/new", client_message_id: clientId(), lang, session_id: old }); } catch (_) { /* the page has moved on */ }
    }
  });
  stopBtn.addEventListener("click", async () => {
    if (!state.sessionId) return;
    stopBtn.disabled = true;  // the notice event says what was stopped and ends the run
    try {
      // the Stop names the run this page shows: if another tab's run has taken its place, it stops nothing
      await post(`/api/sessions/${encodeURIComponent(state.sessionId)}/stop`, { client_message_id: clientId(), run: state.run });
    } catch (_) {
      stopBtn.disabled = false;
      addNotice(t.sendFail, "error");
    }
  });
  locBtn.addEventListener("click", () => {
    if (state.location) { state.location = null; locBtn.classList.remove("on"); hint.textContent = ""; return; }
    if (!navigator.geolocation) { hint.textContent = t.locFail; return; }
    hint.textContent = t.locAsk;
    navigator.geolocation.getCurrentPosition(
      (pos) => {
        state.location = { latitude: pos.coords.latitude, longitude: pos.coords.longitude };
        locBtn.classList.add("on");
        hint.textContent = t.locOn;
      },
      () => { hint.textContent = t.locFail; },
      { timeout: 10000, maximumAge: 600000 },
    );
  });

  refreshInput();
  fetch("/api/auth").then((r) => r.json()).then((a) => {
    if (a.required && !a.authenticated) needToken();
    else if (state.sessionId) reload();
  }, () => { if (state.sessionId) reload(); });
})();
