// Custodian dashboard: draws /board.json and /plan.json, follows the
// daemon's /v1/watch stream (Server-Sent Events, read with fetch so that a
// token can go in a header) and sends the human
// actions (resolve, approve, review) to POST /v1/asdd/{op} with the admin
// token. No framework, no network access beyond the daemon.
"use strict";

const MANIFEST = ".asdd/state/manifest.json";
const IMPL = ".impl/manifest.json";
const JOURNAL_MAX = 60;
const TOKEN_KEY = "custodian.adminToken";
const HEARTBEATS_KEY = "custodian.showHeartbeats";

const state = {
  view: null,        // last /board.json
  fetchedAt: 0,      // Date.now() when it arrived
  rev: 0,            // latest manifest revision seen
  journal: [],       // newest first
  loads: 0,          // board fetches (the tests read it)
  pending: null,     // debounce timer of a board refresh
  trailing: null,    // the refresh after a burst
};
window.custodianBoard = state;

// ---- small DOM helpers -------------------------------------------------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

function $(id) { return document.getElementById(id); }

function fmt3(x) { return x === undefined || x === null ? "—" : Number(x).toFixed(3); }

function age(seconds) {
  if (seconds === undefined || seconds === null) return "?";
  if (seconds < 0) return "in the future";
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, "0")}s`;
  if (seconds < 48 * 3600) return `${Math.floor(seconds / 3600)}h${String(Math.floor(seconds / 60) % 60).padStart(2, "0")}m`;
  return `${Math.floor(seconds / 86400)}d${Math.floor(seconds / 3600) % 24}h`;
}

// elapsed is seconds since the view was fetched, so ages keep ticking.
function elapsed() { return Math.max(0, Math.floor((Date.now() - state.fetchedAt) / 1000)); }

function toast(msg, kind) {
  const t = $("toast");
  t.textContent = msg;
  t.className = "toast " + (kind || "");
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, kind === "error" ? 10000 : 5000);
}

// authHeaders carries the token entered on the page, if any: the admin
// token opens the actions, and either token opens the reads of a daemon
// started with --token.
function authHeaders() {
  const tok = adminToken();
  return tok ? { Authorization: "Bearer " + tok } : {};
}

async function getJSON(url) {
  const r = await fetch(url, { cache: "no-store", headers: authHeaders() });
  const body = await r.json().catch(() => ({}));
  if (r.status === 401) throw new Error("this daemon needs a token to read the state: enter it above");
  if (!r.ok) throw new Error((body.error && body.error.message) || `${url}: HTTP ${r.status}`);
  return body;
}

// ---- the board -----------------------------------------------------------

async function refreshBoard() {
  try {
    const v = await getJSON("/board.json");
    state.view = v;
    state.fetchedAt = Date.now();
    state.loads++;
    state.rev = Math.max(state.rev, v.revision || 0);
    drawBoard();
  } catch (e) {
    $("summary").textContent = "cannot read the board: " + e.message;
  }
}

function scheduleRefresh() {
  clearTimeout(state.pending);
  state.pending = setTimeout(refreshBoard, 60);
  // Once more after a burst of commits: the server hashes the artifacts
  // for the drift marks at most once a second.
  clearTimeout(state.trailing);
  state.trailing = setTimeout(refreshBoard, 1500);
}

function drawBoard() {
  const v = state.view;
  const s = $("summary");
  s.replaceChildren(...[
    h("span", { class: "rev", id: "revision", text: `revision ${v.revision}` }),
    v.current_sprint ? h("span", { text: `sprint ${v.current_sprint}` }) : null,
    h("span", { text: `global confidence ${fmt3(v.global_confidence_score)}` }),
    h("span", { text: `${v.cards.length} slices` }),
    v.open_escalations.length ? h("span", { class: "warn", text: `${v.open_escalations.length} open escalation(s)` }) : null,
  ].filter(Boolean));
  const banner = $("review-banner");
  banner.hidden = !v.needs_human_review;
  banner.replaceChildren();
  if (v.needs_human_review) {
    banner.append("State marked NEEDS_HUMAN_REVIEW: the pipeline is stopped until a human reviews it.");
    if (v.project_needs_human_review && v.project_needs_human_review.length) {
      banner.append(` Project fields guessed by a rebuild: ${v.project_needs_human_review.join(", ")}. `,
        h("button", { class: "act", "data-op": "clear-review", id: "review-project", onclick: () => openAction("clear-review", { slice_id: "" }) }, "Review project"));
    }
  }

  const board = $("board");
  // Columns with cards share the width (BLOCKED gets more: its cards carry
  // the block record and the actions) and wrap to a second row rather than
  // scroll sideways; an empty column collapses to a narrow strip.
  const cols = v.columns.map((name) => {
    const cards = v.cards.filter((c) => c.column === name);
    const label = name.replace("_", "/");
    return h("div", { class: "column" + (name === "BLOCKED" ? " blocked" : "") + (cards.length ? "" : " empty"), "data-column": name, title: cards.length ? null : `${label}: no slices` },
      h("h2", {}, h("span", { class: "col-name", text: label }), h("span", { class: "count", text: cards.length })),
      cards.map((c) => drawCard(c, v)));
  });
  board.replaceChildren(...cols);
  drawEscalations(v);
  drawHeartbeats(v);
}

function drawCard(c, v) {
  const ccsClass = c.ccs === undefined ? "" : c.ccs < v.ccs_floor ? "bad" : c.ccs < 0.8 ? "meh" : "good";
  const card = h("article", { class: "card" + (c.block ? " is-blocked" : ""), "data-slice": c.slice_id, id: "card-" + c.slice_id },
    h("div", { class: "card-head" },
      h("span", { class: "slice-id", text: c.slice_id }),
      h("span", { class: "ccs " + ccsClass, title: "cumulative confidence score", text: "CCS " + fmt3(c.ccs) })),
    c.name ? h("div", { class: "name", text: c.name }) : null,
    c.column !== c.status ? h("div", { class: "status", text: c.status }) : null,
    drawChain(c),
  );
  const meta = h("ul", { class: "meta" });
  if (c.phase_seconds !== undefined) {
    meta.append(h("li", { class: "in-phase", "data-seconds": c.phase_seconds, title: "since " + c.phase_since, text: age(c.phase_seconds + elapsed()) + " in phase" }));
  }
  if (c.lock) {
    meta.append(h("li", { class: "lock" + (c.lock.expired ? " expired" : ""), title: c.lock.expires ? "lease until " + c.lock.expires : "LOCK until a human resolves the conflict", text: (c.lock.expired ? "expired lock of " : "locked by ") + c.lock.holder + (c.lock.requester ? ` (requested by ${c.lock.requester})` : "") }));
  }
  if (c.tasks_total) meta.append(h("li", { text: `tasks ${c.tasks_done}/${c.tasks_total}` + (c.tasks_ready ? ` (ready: ${c.tasks_ready.join(", ")})` : "") }));
  if (c.retro) {
    meta.append(h("li", { class: "retro", title: "retro-spec validation", text: `retro ${c.retro.validation_status}: ${c.retro.requirements_validated} validated, ${c.retro.requirements_corrected} corrected, ${c.retro.requirements_missing} missing` }));
  }
  if (meta.childElementCount) card.append(meta);
  if (c.block) {
    card.append(h("div", { class: "block" },
      h("div", { class: "mode", title: c.block.failure_mode || "", text: `${(c.block.failure_mode || "BLOCKED").replaceAll("_", " ")} at ${c.block.blocked_at_phase} (LKG ${c.block.lkg_phase})` }),
      h("div", { class: "block-reason", text: c.block.block_reason }),
      c.block.awaiting_sign_off && c.block.awaiting_sign_off.length ? h("div", { class: "awaiting", text: "awaiting " + c.block.awaiting_sign_off.join(" + ") }) : null,
      c.block.paused_agents && c.block.paused_agents.length ? h("div", { class: "awaiting", text: "paused: " + c.block.paused_agents.join(", ") }) : null,
      c.block.review_required ? h("div", { class: "awaiting", text: "review: " + c.block.review_required }) : null));
  }
  for (const b of c.blockers || []) card.append(h("div", { class: "blocker", text: "blocker: " + b }));
  for (const d of c.drift || []) card.append(h("div", { class: "drift", title: d.message, text: `≠ ${d.code === "STATE_DRIFT" ? "drift" : "missing"}: ${d.path}` }));
  if (c.needs_human_review && c.needs_human_review.length) {
    card.append(h("div", { class: "review", text: "NEEDS_HUMAN_REVIEW: " + c.needs_human_review.join(", ") }));
  }
  const actions = h("div", { class: "actions" });
  if (c.block) {
    actions.append(h("button", { class: "act", "data-op": "resolve", onclick: () => openAction("resolve", c) }, "Resolve"));
    actions.append(h("button", { class: "act", "data-op": "approve", onclick: () => openAction("approve", c) }, "Approve"));
  }
  if (c.needs_human_review && c.needs_human_review.length) {
    actions.append(h("button", { class: "act", "data-op": "clear-review", onclick: () => openAction("clear-review", c) }, "Review"));
  }
  if (actions.childElementCount) card.append(actions);
  return card;
}

// drawChain draws the confidence chain as bars (height = score), each with
// a tick at its minimum; the weakest link is outlined.
function drawChain(c) {
  if (!c.chain || !c.chain.some((b) => b.score !== undefined)) return null;
  const W = 14, GAP = 4, H = 34;
  const svgNS = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(svgNS, "svg");
  svg.setAttribute("class", "chain");
  // Drawn at its natural size, smaller when the card is narrower.
  const natural = c.chain.length * (W + GAP);
  svg.setAttribute("viewBox", `-1 0 ${natural + 2} ${H + 12}`);
  svg.setAttribute("width", natural);
  svg.style.maxWidth = "100%";
  svg.style.height = "auto";
  svg.setAttribute("role", "img");
  const desc = [];
  c.chain.forEach((b, i) => {
    const x = i * (W + GAP);
    const g = document.createElementNS(svgNS, "g");
    g.setAttribute("class", "link" + (b.weakest ? " weakest" : "") + (b.below_minimum ? " below" : "") + (b.score === undefined ? " none" : ""));
    const title = document.createElementNS(svgNS, "title");
    title.textContent = `${b.agent}: ${b.score === undefined ? "not scored" : fmt3(b.score)} (minimum ${fmt3(b.minimum)})${b.weakest ? " — weakest link" : ""}`;
    g.append(title);
    desc.push(title.textContent);
    const bg = document.createElementNS(svgNS, "rect");
    bg.setAttribute("x", x); bg.setAttribute("y", 0); bg.setAttribute("width", W); bg.setAttribute("height", H);
    bg.setAttribute("class", "bg");
    g.append(bg);
    if (b.score !== undefined) {
      const r = document.createElementNS(svgNS, "rect");
      const hgt = Math.max(1, Math.round(b.score * H));
      r.setAttribute("x", x); r.setAttribute("y", H - hgt); r.setAttribute("width", W); r.setAttribute("height", hgt);
      r.setAttribute("class", "bar");
      g.append(r);
    }
    const tick = document.createElementNS(svgNS, "line");
    const ty = H - Math.round(b.minimum * H);
    tick.setAttribute("x1", x - 1); tick.setAttribute("x2", x + W + 1); tick.setAttribute("y1", ty); tick.setAttribute("y2", ty);
    tick.setAttribute("class", "min");
    g.append(tick);
    const label = document.createElementNS(svgNS, "text");
    label.setAttribute("x", x + W / 2); label.setAttribute("y", H + 10);
    label.textContent = b.agent.slice(0, 2);
    g.append(label);
    svg.append(g);
  });
  svg.setAttribute("aria-label", "confidence chain: " + desc.join("; "));
  // The weak link is information, not an alarm: red only when it is below
  // its agent's minimum.
  const weak = c.chain.find((b) => b.weakest);
  return h("div", { class: "chain-row" }, svg,
    weak ? h("span", { class: "weak" + (weak.below_minimum ? " alarm" : ""), title: weak.below_minimum ? "below its minimum " + fmt3(weak.minimum) : "the lowest score of the chain", text: `weak link: ${weak.agent} ${fmt3(weak.score)}` }) : null);
}

function drawEscalations(v) {
  const box = $("escalations");
  if (!v.open_escalations.length) { box.replaceChildren(h("p", { class: "empty", text: "none" })); return; }
  box.replaceChildren(...v.open_escalations.map((e) => {
    const ev = h("dl", { class: "evidence" });
    const row = (k, val) => { if (val !== undefined && val !== null && val !== "" && !(Array.isArray(val) && !val.length)) ev.append(h("dt", { text: k }), h("dd", { text: Array.isArray(val) ? val.join("; ") : val })); };
    row("phase", e.phase);
    row("agent", e.agent);
    row("score", e.score !== undefined ? fmt3(e.score) : undefined);
    row("CCS", e.ccs !== undefined ? fmt3(e.ccs) : undefined);
    row("uncertainty", e.uncertainty_factors);
    row("artifacts", e.artifacts);
    row("action", e.action_required);
    row("route to", e.route_to);
    for (const cf of e.conflict || []) row("conflict " + cf.field, `${cf.theirs.agent}: ${cf.theirs.value}  ≠  ${cf.ours.agent}: ${cf.ours.value}`);
    const notice = h("details", { class: "notice" }, h("summary", { text: e.path }));
    notice.addEventListener("toggle", async () => {
      if (!notice.open || notice.dataset.loaded) return;
      notice.dataset.loaded = "1";
      const r = await fetch(`/notice?slice=${encodeURIComponent(e.slice)}&id=${encodeURIComponent(e.id)}`, { headers: authHeaders() });
      notice.append(h("pre", { text: r.ok ? await r.text() : `not available (HTTP ${r.status})` }));
    });
    return h("div", { class: "escalation", "data-escalation": e.id },
      h("div", { class: "esc-head" }, h("b", { text: e.slice }), " ", h("span", { text: e.failure_mode }), " ", h("small", { text: "raised " + e.raised_at })),
      h("div", { class: "esc-reason", text: e.reason }), ev, notice);
  }));
}

function drawHeartbeats(v) {
  const box = $("heartbeats");
  if (!v.heartbeats.length) { box.replaceChildren(h("p", { class: "empty", text: "no agent has reported yet" })); return; }
  const rows = v.heartbeats.map((b) => {
    let work = b.current_slice || "";
    if (b.current_wave !== undefined) work += ` wave ${b.current_wave}`;
    if (b.tasks_completed !== undefined || b.tasks_remaining !== undefined) work += ` · ${b.tasks_completed ?? "?"} done, ${b.tasks_remaining ?? "?"} left`;
    return h("tr", { class: b.stale ? "stale" : "", "data-agent": b.agent },
      h("td", { text: b.agent }),
      h("td", {}, h("span", { class: "pill " + b.status.toLowerCase(), text: b.status })),
      h("td", { class: "hb-age", "data-seconds": b.age_seconds, text: b.age_seconds === undefined ? "?" : age(b.age_seconds + elapsed()) + " ago" }),
      h("td", { text: work.trim() }),
      h("td", { class: "note", text: b.stale ? "STALE" : "" }));
  });
  box.replaceChildren(h("table", { class: "hb" }, h("tbody", {}, rows)));
}

// Ages tick every second without asking the server.
setInterval(() => {
  for (const el of document.querySelectorAll("[data-seconds]")) {
    const s = Number(el.dataset.seconds) + elapsed();
    if (el.classList.contains("hb-age")) el.textContent = age(s) + " ago";
    else if (el.classList.contains("in-phase")) el.textContent = age(s) + " in phase";
  }
}, 1000);

// ---- the journal ---------------------------------------------------------

function patchLines(patch) {
  if (!Array.isArray(patch)) return [];
  return patch.map((op) => {
    const sign = op.op === "add" ? "+" : op.op === "remove" ? "−" : "~";
    let val = op.value === undefined ? (op.from ? `from ${op.from}` : "") : JSON.stringify(op.value);
    if (val.length > 160) val = val.slice(0, 157) + "…";
    return h("li", { class: "op " + op.op }, h("span", { class: "sign", text: sign }), " ", h("code", { text: op.path }), val ? " " : "", val ? h("span", { class: "val", text: val }) : null);
  });
}

function journalItem(rec) {
  const t = new Date(rec.time);
  const events = (rec.events || []).map((e) => e.type).join(", ");
  const ops = Array.isArray(rec.patch) ? rec.patch.length : 0;
  return h("li", { class: "commit", "data-rev": rec.rev },
    h("div", { class: "commit-head" },
      h("span", { class: "rev", text: "r" + rec.rev }),
      h("time", { datetime: rec.time, title: rec.time, text: isNaN(t) ? rec.time : t.toTimeString().slice(0, 8) }),
      h("b", { text: rec.actor || "?" }),
      h("span", { class: "reason", text: rec.reason || "" })),
    events ? h("div", { class: "events", text: events }) : null,
    h("details", {}, h("summary", { text: `diff: ${ops} change${ops === 1 ? "" : "s"}` }), h("ul", { class: "patch" }, patchLines(rec.patch))));
}

// isHeartbeat reports whether a commit only records agents' heartbeats.
function isHeartbeat(rec) {
  return Array.isArray(rec.events) && rec.events.length > 0 && rec.events.every((e) => e.type === "heartbeat");
}

function drawJournal() {
  const show = $("show-heartbeats").checked;
  const shown = state.journal.filter((r) => show || !isHeartbeat(r));
  const hidden = state.journal.length - shown.length;
  $("journal").replaceChildren(...shown.map(journalItem));
  $("journal-note").textContent = state.journal.length ? `latest ${state.journal.length} commits, live` + (hidden ? ` · ${hidden} heartbeat${hidden === 1 ? "" : "s"} hidden` : "") : "";
}

async function loadJournal(rev) {
  const from = Math.max(1, rev - JOURNAL_MAX + 1);
  try {
    const body = await getJSON(`/v1/history?key=${encodeURIComponent(MANIFEST)}&from=${from}`);
    state.journal = (body.records || []).slice().reverse();
    drawJournal();
  } catch (e) {
    $("journal").replaceChildren(h("li", { class: "empty", text: "journal not available: " + e.message }));
  }
}

// ---- plan and cycles -----------------------------------------------------

async function refreshPlan() {
  let body;
  try { body = await getJSON("/plan.json"); } catch (e) { $("plan").textContent = e.message; return; }
  const box = $("plan");
  if (!body.plan) {
    box.replaceChildren(h("p", { class: "empty", text: "no .impl/manifest.json" }));
  } else {
    const p = body.plan;
    const counts = Object.entries(p.counts).filter(([, n]) => n > 0).map(([s, n]) => h("span", { class: "pill " + s, text: `${s} ${n}` }));
    box.replaceChildren(
      h("div", { class: "plan-head" }, h("b", { text: p.title || p.path || "plan" }), " ", counts),
      h("div", { class: "phases" }, p.phases.map((ph) => h("div", { class: "phase", "data-phase": ph.number },
        h("h3", { text: `phase ${ph.number}` + (ph.depends_on && ph.depends_on.length ? ` ← ${ph.depends_on.join(", ")}` : "") }),
        ph.tasks.map((t) => h("div", { class: "task " + t.status, title: [t.description, t.branch && "branch " + t.branch, t.error].filter(Boolean).join("\n") },
          h("span", { class: "task-id", text: t.id }), " ", h("span", { class: "pill " + t.status, text: t.status }),
          t.retries ? h("small", { text: ` retries ${t.retries}` }) : null))))));
  }
  const cbox = $("cycles");
  if (!body.cycles.length) { cbox.replaceChildren(h("p", { class: "empty", text: "no cycles" })); return; }
  cbox.replaceChildren(...body.cycles.map((c) => h("div", { class: "cycle", "data-cycle": c.cycle_id },
    h("div", {}, h("b", { text: c.title || c.cycle_id }), " ", h("span", { class: "pill " + c.status, text: c.status })),
    h("div", { class: "sub", text: `${c.cycle_id} · phase ${c.current_phase || "—"} · iteration ${c.current_iteration}/${c.max_iterations}` }),
    h("div", { class: "agents" }, Object.entries(c.agents).map(([a, s]) => h("span", { class: "pill " + s, text: `${a} ${s}` }))),
    (c.open_blockers || []).map((b) => h("div", { class: "blocker", text: "blocker: " + b })),
    c.failure_reason ? h("div", { class: "blocker", text: c.failure_reason }) : null)));
}

// ---- live updates ------------------------------------------------------

// watch follows /v1/watch for key (Server-Sent Events read with fetch, so
// that the token can go in a header), calling onCommit for every commit
// after revision from, and reconnecting from the last revision seen.
// onState gets "live", "reconnecting" or "token needed".
async function watch(key, from, onCommit, onState, floor) {
  let last = from;
  let delay = 500;
  for (;;) {
    // Never replay what the page already drew from a fresh read.
    if (floor) last = Math.max(last, floor());
    try {
      const r = await fetch(`/v1/watch?key=${encodeURIComponent(key)}&from=${last}`, { headers: authHeaders(), cache: "no-store" });
      if (r.status === 401) {
        onState("token needed");
        await sleep(2000);
        continue;
      }
      if (!r.ok || !r.body) throw new Error(`HTTP ${r.status}`);
      onState("live");
      delay = 500;
      const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value.replace(/\r\n?/g, "\n");
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const ev = parseEvent(block);
          if (ev.id !== null && /^\d+$/.test(ev.id)) last = Number(ev.id);
          if (ev.event === "commit") {
            let c;
            try { c = JSON.parse(ev.data); } catch { continue; }
            onCommit(c);
          } else if (ev.event === "error") {
            try { toast("watch: " + JSON.parse(ev.data).error.message, "error"); } catch { /* not ours */ }
          }
        }
      }
    } catch (e) {
      // The daemon went away or the network dropped: try again.
    }
    onState("reconnecting");
    await sleep(delay);
    delay = Math.min(delay * 2, 10000);
  }
}

// parseEvent reads one Server-Sent Events block.
function parseEvent(block) {
  const ev = { event: "message", data: "", id: null };
  const data = [];
  for (const line of block.split("\n")) {
    if (line === "" || line.startsWith(":")) continue;
    const c = line.indexOf(":");
    const field = c < 0 ? line : line.slice(0, c);
    let v = c < 0 ? "" : line.slice(c + 1);
    if (v.startsWith(" ")) v = v.slice(1);
    if (field === "event") ev.event = v;
    else if (field === "data") data.push(v);
    else if (field === "id") ev.id = v;
  }
  ev.data = data.join("\n");
  return ev;
}

function sleep(ms) { return new Promise((res) => setTimeout(res, ms)); }

function startLive(rev) {
  const live = $("live");
  watch(MANIFEST, rev, (c) => {
    if (c.rev <= state.rev && state.journal.some((r) => r.rev === c.rev)) return;
    state.rev = Math.max(state.rev, c.rev);
    state.journal.unshift(c);
    state.journal.length = Math.min(state.journal.length, JOURNAL_MAX);
    drawJournal();
    scheduleRefresh();
  }, (st) => {
    live.textContent = st;
    live.className = "live " + (st === "live" ? "on" : "off");
  }, () => state.rev);
  watch(IMPL, 0, () => refreshPlan(), () => {});
}

// ---- actions -------------------------------------------------------------

function adminToken() { return localStorage.getItem(TOKEN_KEY) || ""; }

const help = {
  resolve: "A human decision on the halted slice: the only way out of a halt. Logged with the rationale in the escalation notice and the failure log.",
  approve: "A named role's sign-off: accepts the halted slice's output.",
  "clear-review": "Confirms what a rebuild guessed: clears the slice's NEEDS_HUMAN_REVIEW marks.",
};

function openAction(op, card) {
  const dlg = $("action-dialog");
  const form = $("action-form");
  form.reset();
  form.dataset.op = op;
  form.dataset.slice = card.slice_id;
  $("action-title").textContent = `${op === "clear-review" ? "Review" : op[0].toUpperCase() + op.slice(1)} ${card.slice_id || "the project context"}`;
  $("action-help").textContent = help[op] + (adminToken() ? "" : " No admin token is set: the daemon will refuse it.");
  for (const el of form.querySelectorAll(".only-resolve")) el.hidden = !(op === "resolve" || (op === "approve" && el.classList.contains("only-approve")));
  dlg.showModal();
}

async function sendAction(op, slice, fields) {
  const body = { Slice: slice || undefined, Role: fields.role, By: fields.by || undefined, Rationale: fields.rationale };
  if (op === "resolve") {
    body.Action = fields.to ? "return" : fields.action;
    if (body.Action === "return") body.ReturnTo = (fields.to || "").toUpperCase();
  }
  if ((op === "resolve" || op === "approve") && fields.root_cause) body.RootCause = fields.root_cause;
  if (slice) {
    try {
      // What the human saw on disk is what they accept, as with the CLI.
      body.Hashes = (await getJSON(`/hashes?slice=${encodeURIComponent(slice)}`)).hashes;
    } catch (e) {
      toast("cannot hash the slice's artifacts: " + e.message, "error");
      return false;
    }
  }
  const headers = { "Content-Type": "application/json", ...authHeaders() };
  const r = await fetch(`/v1/asdd/${op}`, { method: "POST", headers, body: JSON.stringify(body) });
  const res = await r.json().catch(() => ({}));
  if (!r.ok) {
    const e = res.error || {};
    const msg = r.status === 401 ? `refused: ${e.message || "the admin token is required"}` : `${e.code || r.status}: ${e.message || "failed"}`;
    toast(msg, "error");
    return false;
  }
  toast(`revision ${res.revision}: ${res.summary}`, "ok");
  scheduleRefresh();
  return true;
}

function setupActions() {
  const form = $("action-form");
  form.addEventListener("submit", (ev) => {
    const submitter = ev.submitter;
    if (!submitter || submitter.value !== "ok") return;
    ev.preventDefault();
    const fields = Object.fromEntries(new FormData(form).entries());
    $("action-dialog").close();
    sendAction(form.dataset.op, form.dataset.slice, fields);
  });
  const input = $("admin-token");
  input.value = adminToken();
  const save = () => {
    const v = input.value.trim();
    if (v) localStorage.setItem(TOKEN_KEY, v); else localStorage.removeItem(TOKEN_KEY);
    document.body.classList.toggle("admin", !!v);
    if (state.started) reloadAll();
  };
  input.addEventListener("change", save);
  $("token-form").addEventListener("submit", (ev) => { ev.preventDefault(); save(); toast(input.value ? "admin token set" : "read-only", "ok"); });
  // custodian serve prints the dashboard's address with #admin=TOKEN.
  const m = location.hash.match(/admin=([^&]+)/);
  if (m) {
    input.value = decodeURIComponent(m[1]);
    save();
    history.replaceState(null, "", location.pathname + location.search);
  }
  document.body.classList.toggle("admin", !!adminToken());
  // Heartbeat commits are hidden from the journal unless asked for.
  const hb = $("show-heartbeats");
  hb.checked = localStorage.getItem(HEARTBEATS_KEY) === "1";
  hb.addEventListener("change", () => {
    localStorage.setItem(HEARTBEATS_KEY, hb.checked ? "1" : "0");
    drawJournal();
  });
}

// ---- start ---------------------------------------------------------------

// reloadAll reads everything again (after the token changed).
async function reloadAll() {
  await refreshBoard();
  await loadJournal(state.rev);
  refreshPlan();
}

async function start() {
  setupActions();
  await refreshBoard();
  const rev = state.view ? state.view.revision : 0;
  await loadJournal(rev);
  refreshPlan();
  startLive(rev);
  state.started = true;
  setInterval(refreshPlan, 15000);
  setInterval(scheduleRefresh, 30000); // heartbeat staleness, expired leases, drift
}

start();
