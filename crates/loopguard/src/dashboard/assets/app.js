// loopguard dashboard. Every text from the server goes into the page as text (textContent),
// never as markup. No framework, no network beyond this origin.
"use strict";

const state = {
  overview: null,
  events: new Map(), // "ws:seq" -> item
  order: [], // keys, oldest first
  selected: null,
  inflight: null, // {ws, session, tool_use_id, timer}
};
const MAX_EVENTS = 2000;
const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k === "style") e.style.cssText = v; // CSSOM: allowed under the page's CSP
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const kid of kids.flat()) if (kid !== null && kid !== undefined) e.append(kid);
  return e;
}
const SVG = "http://www.w3.org/2000/svg";
function sv(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

// The session secret lives in this tab's sessionStorage (one origin: this port only) and goes
// out as a header; no cookie exists, so no other local port ever receives it.
const SESSION_KEY = "loopguard-session";
function session() {
  return sessionStorage.getItem(SESSION_KEY);
}

async function login() {
  const m = location.hash.match(/token=([0-9a-f]+)/);
  if (m) {
    // Out of the address bar and history at once.
    history.replaceState(null, "", "/");
    const r = await fetch("/api/login", { method: "POST", credentials: "omit", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ token: m[1] }) });
    const body = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(body.error || "HTTP " + r.status);
    sessionStorage.setItem(SESSION_KEY, body.session);
  }
  if (!session()) throw new Error("no session: open the one-time link `loopguard dashboard` printed");
}

async function api(path, opts) {
  opts = Object.assign({ credentials: "omit" }, opts || {});
  opts.headers = Object.assign({ Authorization: "Bearer " + session() }, opts.headers || {});
  const r = await fetch(path, opts);
  let body = null;
  try { body = await r.json(); } catch (_) { body = null; }
  if (!r.ok) throw new Error((body && body.error) || ("HTTP " + r.status));
  return body;
}

// ---- feed ----------------------------------------------------------------------------------

function verdictOf(ev) {
  if (ev.decision) return ev.decision;
  return ev.kind === "hook-error" ? "deny" : "";
}

function summary(item) {
  const c = item.call;
  if (!c) return "";
  const a = c.action;
  return a.command || (a.paths && a.paths.join(" ")) || a.url || a.detail || a.kind;
}

function addItem(item, live) {
  const key = item.ws + ":" + item.event.seq;
  if (state.events.has(key)) {
    // The journal record may come later than the event: keep the richer one.
    if (item.call && !state.events.get(key).call) state.events.set(key, item);
    return false;
  }
  state.events.set(key, item);
  state.order.push(key);
  if (state.order.length > MAX_EVENTS) state.events.delete(state.order.shift());
  if (live) onLiveEvent(item);
  return true;
}

function matches(item) {
  const ws = $("f-ws").value, s = $("f-session").value.trim(), d = $("f-decision").value, r = $("f-reason").value.trim();
  if (ws && item.ws !== ws) return false;
  if (s && !item.event.session.includes(s)) return false;
  if (d && verdictOf(item.event) !== d) return false;
  if (r && !item.event.reasons.some((c) => c.includes(r))) return false;
  return true;
}

function renderFeed() {
  const list = $("feed");
  const kids = [];
  for (let i = state.order.length - 1; i >= 0 && kids.length < 400; i--) {
    const item = state.events.get(state.order[i]);
    if (item && matches(item)) kids.push(feedRow(item));
  }
  list.replaceChildren(...kids);
}

function feedRow(item) {
  const ev = item.event;
  const v = verdictOf(ev);
  const key = item.ws + ":" + ev.seq;
  const li = el("li", {
    tabindex: "0",
    "data-key": key,
    "data-kind": ev.kind,
    "data-decision": v,
    class: state.selected === key ? "selected" : "",
    "aria-label": `${ev.kind} ${ev.tool || ""} ${v} ${ev.reasons.join(" ")}`.trim(),
  },
    v ? el("span", { class: "badge " + (["allow", "ask", "deny"].includes(v) ? v : "other"), text: v }) : null,
    " ", el("strong", { text: ev.tool || ev.kind }), " ",
    item.call && item.call.action.command ? el("code", { text: summary(item) }) : el("span", { text: summary(item) }),
    el("div", { class: "meta", text: `${ev.time} · ${item.ws} · session ${ev.session.slice(0, 12) || "—"} · #${ev.seq}${ev.reasons.length ? " · " + ev.reasons.join(", ") : ""}` }),
  );
  li.addEventListener("click", () => selectEvent(item));
  li.addEventListener("keydown", (e) => {
    if (e.key === "Enter") selectEvent(item);
    if (e.key === "e" && isShell(item)) expand(item);
  });
  if (isShell(item)) onDoubleActivate(li, () => expand(item));
  return li;
}

function isShell(item) {
  return !!(item.call && item.call.action.kind === "shell");
}

// ---- one event -----------------------------------------------------------------------------

async function selectEvent(item) {
  state.selected = item.ws + ":" + item.event.seq;
  for (const li of $("feed").children) li.classList.toggle("selected", li.dataset.key === state.selected);
  const box = $("event");
  box.replaceChildren(el("p", { text: "Loading…" }));
  let data;
  try {
    data = await api(`/api/call?ws=${encodeURIComponent(item.ws)}&seq=${item.event.seq}`);
  } catch (e) {
    box.replaceChildren(el("p", { text: "Could not load the event: " + e.message }));
    return;
  }
  const ev = data.event, call = data.call;
  const ver = data.verify && data.verify.Ok;
  const dl = el("dl", {},
    el("dt", { text: "kind" }), el("dd", { text: ev.kind }),
    el("dt", { text: "decision" }), el("dd", { text: ev.decision || "—" }),
    el("dt", { text: "tool" }), el("dd", { text: ev.tool || "—" }),
    el("dt", { text: "session" }), el("dd", { text: ev.session || "—" }),
    el("dt", { text: "time" }), el("dd", { text: ev.time }),
    el("dt", { text: "chain position" }), el("dd", { text: `#${ev.seq} · hash ${ev.hash.slice(0, 16)}… · previous ${ev.prev_hash.slice(0, 16)}…` }),
    el("dt", { text: "log verifies" }), el("dd", { text: ver ? (ver.ok ? `yes (${ver.events} events, ${ver.checkpoints} signed checkpoints)` : "NO: " + ver.problem) : "cannot be read: " + ((data.verify && data.verify.Err) || "?") }),
  );
  if (call) {
    const a = call.action;
    dl.append(el("dt", { text: "input (redacted)" }), el("dd", {}, el("code", { text: [a.kind, a.command, (a.paths || []).join(" "), a.url, a.detail].filter(Boolean).join(" · ") })));
  } else if (ev.kind === "pre-tool-use") {
    dl.append(el("dt", { text: "input" }), el("dd", { text: "not in the call journal (only its hash is in the log: " + ((ev.details && ev.details.input_sha256) || "?").slice(0, 16) + "…)" }));
  }
  const reasons = (call ? call.reasons : []).map((r) => el("div", { class: "reason" },
    el("span", { class: "badge " + r.verdict, text: r.verdict }), " ", el("strong", { text: r.code }),
    el("div", { text: r.message }),
    r.remedy ? el("div", {}, el("em", { text: "What would make it pass: " }), r.remedy) : null,
  ));
  if (!call) {
    for (const c of data.codes) reasons.push(el("div", { class: "reason" }, el("strong", { text: c.code }), el("div", { text: c.about || "" })));
  }
  const kids = [dl, el("h3", { text: "Reasons" }), ...(reasons.length ? reasons : [el("p", { text: "none" })])];
  if (call && call.action.paths && call.action.paths.length) {
    kids.push(el("h3", { text: "Paths (long-press one, or focus it and press Enter)" }), pathChips(item.ws, call.action.paths));
  }
  if (isShell({ call })) {
    kids.push(el("button", { type: "button", onclick: () => expand(item), text: "Show the command's segments" }));
  }
  box.replaceChildren(...kids);
}

// ---- the canvas ----------------------------------------------------------------------------

function setEdge(id, cls) {
  const e = $(id);
  e.classList.remove("idle", "inflight", "allow", "block");
  e.classList.add(cls);
}

function onLiveEvent(item) {
  const ev = item.event;
  if (ev.kind === "pre-tool-use" || ev.kind === "hook-error") {
    const v = verdictOf(ev);
    // The call passed through the gate: the edge into it pulses amber, then settles.
    setEdge("edge-in", "inflight");
    clearTimeout(state.edgeTimer);
    state.edgeTimer = setTimeout(() => setEdge("edge-in", v === "allow" ? "allow" : "block"), 450);
    showLastCall(item);
    if (v === "allow") {
      // Allowed: the action runs until its result comes back.
      setEdge("edge-out", "inflight");
      clearTimeout(state.outTimer);
      state.inflight = { ws: item.ws, session: ev.session, id: ev.tool_use_id };
      state.outTimer = setTimeout(() => setEdge("edge-out", "idle"), 60000);
    } else {
      setEdge("edge-out", "idle");
    }
  } else if ((ev.kind === "post-tool-use" || ev.kind === "post-tool-use-failure") && state.inflight) {
    const f = state.inflight;
    if (f.ws === item.ws && f.session === ev.session && (!f.id || !ev.tool_use_id || f.id === ev.tool_use_id)) {
      clearTimeout(state.outTimer);
      setEdge("edge-out", ev.kind === "post-tool-use" ? "allow" : "block");
      state.inflight = null;
    }
  }
}

function showLastCall(item) {
  const p = $("last-call");
  const v = verdictOf(item.event);
  p.textContent = `${item.event.tool || item.event.kind}: ${summary(item) || "(no journal record)"} — ${v}${item.event.reasons.length ? " (" + item.event.reasons.join(", ") + ")" : ""}`;
  p.dataset.key = item.ws + ":" + item.event.seq;
  p.setAttribute("aria-label", "Last call: " + p.textContent + (isShell(item) ? ". Double-click, double-tap or press E to see its segments." : ""));
  state.last = item;
}

// Double-click with a mouse, double-tap with a finger.
function onDoubleActivate(node, fn) {
  node.addEventListener("dblclick", (e) => { e.preventDefault(); fn(); });
  let lastTap = 0;
  node.addEventListener("pointerup", (e) => {
    if (e.pointerType !== "touch" && e.pointerType !== "pen") return;
    const now = e.timeStamp;
    if (now - lastTap < 400) { lastTap = 0; fn(); } else lastTap = now;
  });
}

// Long press (pointer held 500 ms) with a mouse, a pen or a finger.
function onLongPress(node, fn) {
  let timer = null;
  const cancel = () => { clearTimeout(timer); timer = null; };
  node.addEventListener("pointerdown", (e) => {
    cancel();
    timer = setTimeout(() => { timer = null; fn(); }, 500);
    e.preventDefault();
  });
  for (const t of ["pointerup", "pointerleave", "pointercancel"]) node.addEventListener(t, cancel);
  node.addEventListener("contextmenu", (e) => e.preventDefault());
}

async function expand(item) {
  const box = $("expand");
  box.replaceChildren(el("p", { text: "Deciding each segment…" }));
  let data;
  try {
    data = await api(`/api/explain?ws=${encodeURIComponent(item.ws)}&seq=${item.event.seq}`);
  } catch (e) {
    box.replaceChildren(el("p", { text: "Could not expand the call: " + e.message }));
    return;
  }
  const chips = el("ul", { class: "chips", id: "segments", "aria-label": "Segments of the command, each decided alone" },
    data.segments.map((s) => el("li", {
      class: "chip seg " + s.verdict,
      "data-verdict": s.verdict,
      title: s.message || s.verdict,
      "aria-label": `${s.text}: ${s.verdict}${s.reasons.length ? " (" + s.reasons.join(", ") + ")" : ""}`,
    }, el("span", { "aria-hidden": "true", text: s.verdict === "allow" ? "✓" : "✕" }), s.text)));
  const paths = pathChips(item.ws, data.paths);
  box.replaceChildren(el("h3", { text: "Segments" }), chips, data.paths.length ? el("h3", { text: "Paths (long-press one)" }) : null, data.paths.length ? paths : null);
}

function pathChips(ws, paths) {
  return el("ul", { class: "chips paths", "aria-label": "Paths in the call: long-press, or press Enter, to see where each leads" },
    paths.map((p) => {
      const chip = el("li", { class: "chip path", tabindex: "0", role: "button", "data-path": p, text: p });
      onLongPress(chip, () => showPath(ws, p));
      chip.addEventListener("keydown", (e) => { if (e.key === "Enter") showPath(ws, p); });
      return chip;
    }));
}

function short(p, n) {
  n = n || 34;
  return p.length > n ? "…" + p.slice(p.length - n + 1) : p;
}

async function showPath(ws, path) {
  const wrap = $("pathview-wrap"), svg = $("pathview");
  let c;
  try {
    c = await api(`/api/path?ws=${encodeURIComponent(ws)}&path=${encodeURIComponent(path)}`);
  } catch (e) {
    wrap.hidden = false;
    $("pathview-desc").textContent = "Could not resolve the path: " + e.message;
    return;
  }
  wrap.hidden = false;
  $("pathview-h").textContent = "Path " + path;
  const desc = `Workspace roots: ${c.roots.join(", ")}. ${c.hops.length} symlink hop(s). It resolves to ${c.target}, ${c.inside ? "inside" : "outside"} the workspace.`;
  const kids = [sv("desc", { id: "pathview-desc" }, desc)];
  // The workspace roots: one boundary ring; inside it, what stays inside.
  kids.push(sv("ellipse", { class: "boundary", cx: 215, cy: 135, rx: 200, ry: 115 }));
  kids.push(sv("text", { class: "pv-label", x: 215, y: 14, "text-anchor": "middle" }, "workspace: " + short(c.roots.join(", "), 48)));
  const chain = [{ path: c.path, inside: c.hops.length ? c.hops[0].inside || insideRoots(c.roots, c.path) : c.inside }];
  for (const h of c.hops) chain.push({ path: h.to, inside: h.inside });
  if (!c.hops.length) chain[0].inside = c.inside;
  let inI = 0, outI = 0;
  const pos = chain.map((n) => n.inside ? { x: 110 + (inI++ % 3) * 105, y: 80 + Math.floor((inI - 1) / 3) * 60 + ((inI - 1) % 2) * 35 } : { x: 520 + (outI % 2) * 40, y: 80 + (outI++) * 55 });
  for (let i = 1; i < chain.length; i++) {
    const escape = chain[i - 1].inside && !chain[i].inside;
    kids.push(sv("path", {
      class: "hop" + (escape ? " escape" : ""),
      "data-escape": escape ? "true" : "false",
      d: `M${pos[i - 1].x},${pos[i - 1].y} Q${(pos[i - 1].x + pos[i].x) / 2},${Math.min(pos[i - 1].y, pos[i].y) - 30} ${pos[i].x},${pos[i].y}`,
    }));
  }
  chain.forEach((n, i) => {
    kids.push(sv("circle", { class: "pv-node " + (n.inside ? "inside" : "outside"), cx: pos[i].x, cy: pos[i].y, r: 8, "data-inside": String(n.inside) }));
    kids.push(sv("text", { class: "pv-label", x: pos[i].x, y: pos[i].y + 22, "text-anchor": "middle" }, short(n.path, 26)));
  });
  svg.replaceChildren(...kids);
  wrap.scrollIntoView({ block: "nearest" });
}

function insideRoots(roots, p) {
  return roots.some((r) => p === r || p.startsWith(r.endsWith("/") ? r : r + "/"));
}

// ---- panels --------------------------------------------------------------------------------

const LADDER = ["FULL_AUTO", "PR_ONLY", "READ_ONLY", "STOPPED"];

function countdown(until) {
  const s = Math.max(0, Math.round((Date.parse(until) - Date.now()) / 1000));
  if (!isFinite(s) || s === 0) return "cooldown over";
  const m = Math.floor(s / 60);
  return `cooldown ${m ? m + " min " : ""}${s % 60} s`;
}

function renderPanels() {
  const o = state.overview;
  if (!o) return;
  const wsSel = $("f-ws"), aWs = $("a-ws");
  const keep = wsSel.value, keepA = aWs.value;
  wsSel.replaceChildren(el("option", { value: "", text: "all workspaces" }), ...o.workspaces.map((w) => el("option", { value: w.key, text: w.path || w.key })));
  wsSel.value = keep;
  aWs.replaceChildren(...o.workspaces.filter((w) => w.path).map((w) => el("option", { value: w.key, text: w.path })));
  if (keepA) aWs.value = keepA;
  const shown = o.workspaces.filter((w) => !keep || w.key === keep);
  $("breakers").replaceChildren(...(shown.length ? shown.map(breakerBlock) : [el("p", { text: "No audit log yet." })]));
  $("grants").replaceChildren(...shown.map(grantsBlock));
  const esc = shown.flatMap((w) => w.escalations.map((b) => el("div", { class: "reason" },
    el("strong", { text: b.title }), el("div", { class: "meta", text: w.path || w.key }),
    b.facts.length ? el("ul", {}, b.facts.map((f) => el("li", { text: f }))) : null,
    el("div", {}, el("em", { text: "What a human must do: " }), b.todo || "see STATE.md"))));
  $("escalations").replaceChildren(...(esc.length
    ? [el("p", { class: "meta", text: "From each workspace's STATE.md, a file the agent can write too: check an entry against the audit log before acting on it." }), ...esc]
    : [el("p", { text: "No blockers." })]));
}

function breakerBlock(w) {
  const kids = [el("h3", { text: w.path || w.key })];
  const v = w.verify.Ok;
  kids.push(el("p", { class: "verify " + (v && v.ok ? "ok" : "bad"), "data-verify": v && v.ok ? "ok" : "bad",
    text: v ? (v.ok ? `Audit log verifies: ${v.events} events, ${v.checkpoints} signed checkpoint(s).` : `Audit log does NOT verify: ${v.problem}`) : "Audit log cannot be read: " + w.verify.Err }));
  const b = w.breaker && w.breaker.Ok;
  if (!b) {
    kids.push(el("p", { text: w.breaker ? "Breaker: " + w.breaker.Err : "Breaker: the workspace's root is not known (start the dashboard with --workspace)." }));
    return el("div", { class: "ws-block", "data-ws": w.key }, kids);
  }
  kids.push(el("ol", { class: "ladder", "aria-label": "Breaker position" },
    LADDER.map((p) => {
      const here = p === String(b.position).toUpperCase().replace("-", "_");
      return el("li", { class: here ? "current" : "", "aria-current": here ? "step" : null, text: p });
    })));
  if (b.require_approval) kids.push(el("p", { text: "Every call needs a human's approval." }));
  for (const t of b.trips) {
    kids.push(el("div", { class: "trip" }, el("strong", { text: `${t.trigger} → ${t.action}` }), el("div", { text: t.reason }),
      el("div", { class: "meta countdown", "data-until": t.cooldown_until, text: countdown(t.cooldown_until) }),
      el("div", { class: "meta", text: `since ${t.since} · reset: ${t.reset}` })));
  }
  for (const g of b.budgets) {
    const used = g.used === null || g.used === undefined ? 0 : g.used;
    const pct = Math.max(0, Math.min(100, used * 100));
    kids.push(el("div", { class: "bar" },
      el("span", { text: g.trigger }),
      el("div", { class: "track", role: "progressbar", "aria-label": `${g.trigger}: ${g.value ?? "—"} of ${g.threshold}`, "aria-valuemin": "0", "aria-valuemax": "100", "aria-valuenow": String(Math.round(pct)) },
        el("div", { class: "fill" + (used >= 1 ? " over" : used >= 0.75 ? " warn" : ""), style: `width:${pct}%` })),
      el("span", { text: `${g.value === null || g.value === undefined ? "—" : +(+g.value).toFixed(2)} / ${g.threshold}` })));
  }
  kids.push(el("p", { class: "meta", text: `Spend today (all workspaces): ${b.daily_usd === null || b.daily_usd === undefined ? "unpriced" : "$" + b.daily_usd.toFixed(2)}` + (b.run ? ` · run ${b.run.session.slice(0, 12)}: ${b.run.steps} steps, ${b.run.tokens} tokens` : "") }));
  return el("div", { class: "ws-block", "data-ws": w.key }, kids);
}

function ring(fraction) {
  const r = 7, c = 2 * Math.PI * r;
  const s = sv("svg", { class: "ring", width: 18, height: 18, viewBox: "0 0 18 18", "aria-hidden": "true" });
  s.append(sv("circle", { class: "track", cx: 9, cy: 9, r }));
  s.append(sv("circle", { class: "left", cx: 9, cy: 9, r, "stroke-dasharray": String(c), "stroke-dashoffset": String(c * (1 - fraction)) }));
  return s;
}

function grantsBlock(w) {
  const now = Date.now() / 1000;
  const chips = [];
  const g = w.grants && w.grants.Ok;
  for (const x of g ? g.grants : []) {
    const temp = x.expires_at !== null && x.expires_at !== undefined;
    const frac = temp ? Math.max(0, Math.min(1, (x.expires_at - now) / Math.max(1, x.expires_at - x.created_at))) : 1;
    chips.push(el("li", { class: "chip grant" + (x.active ? "" : " expired"), "data-grant": String(x.id), "data-active": String(x.active),
      "data-from": temp ? String(x.created_at) : null, "data-until": temp ? String(x.expires_at) : null,
      "aria-label": `grant ${x.id}: ${x.tool}${x.resource ? " on " + x.resource : ""}, ${x.scope}, ${x.state}` },
      temp && x.active ? ring(frac) : null, `#${x.id} ${x.tool}${x.resource ? " · " + x.resource : ""}`,
      el("span", { class: "meta left-text", text: temp && x.active ? left(x.expires_at - now) : x.state })));
  }
  if (w.yolo) {
    const y = w.yolo;
    const frac = Math.max(0, Math.min(1, (y.until - now) / Math.max(1, y.until - y.from)));
    chips.push(el("li", { class: "chip ask", "data-yolo": "on", "data-active": "true", "data-from": String(y.from), "data-until": String(y.until),
      "aria-label": `yolo on until ${new Date(y.until * 1000).toISOString()} by ${y.operator}` },
      ring(frac), `yolo (${y.operator}): ${y.approved} approved`, el("span", { class: "meta left-text", text: left(y.until - now) })));
  }
  return el("div", { class: "ws-block" }, el("h3", { text: w.path || w.key }),
    chips.length ? el("ul", { class: "chips", "aria-label": "Grants" }, chips) : el("p", { text: "No grants, yolo off." }));
}

async function refresh() {
  try {
    const o = await api("/api/overview");
    state.overview = o;
    renderPanels();
  } catch (e) {
    $("breakers").replaceChildren(el("p", { text: "Could not load: " + e.message }));
  }
}

let refreshTimer = null;
function refreshSoon() {
  if (refreshTimer) return;
  refreshTimer = setTimeout(() => { refreshTimer = null; refresh(); }, 300);
}

// ---- fleet ---------------------------------------------------------------------------------

function dollars(micro) {
  // Rounded up to the cent, as the CLI does: never show less than was spent.
  return "$" + (Math.ceil(micro / 10000) / 100).toFixed(2);
}

function fleetTable(caption, head, rows) {
  return el("table", { class: "fleet" },
    el("caption", { text: caption }),
    el("thead", {}, el("tr", {}, head.map((h) => el("th", { scope: "col", text: h })))),
    el("tbody", {}, rows.map((r) => el("tr", {}, r.map((c) => (c instanceof Node ? el("td", {}, c) : el("td", { text: String(c) })))))));
}

function renderFleet(f) {
  const hosts = fleetTable("Hosts", ["Host", "Group", "Last heartbeat", "Status"], f.hosts.map((h) => [
    h.host + (h.host === f.this_host ? " (this one)" : ""), h.group || "—", `${h.silent_for} s ago`,
    el("span", { class: h.silent ? "verify bad" : "verify ok", text: h.silent ? "SILENT" : "reporting" }),
  ]));
  const positions = fleetTable("Positions", ["Scope", "Position", "Version", "Set by"], f.positions.map((p) => [
    p.scope === "*" ? "the whole fleet" : p.scope, p.position, p.version, p.signed ? p.set_by : "unsigned (not an operator's word)",
  ]));
  const budgets = fleetTable(`Budgets on ${f.day}`, ["Scope", "Limit", "Spent", "Reserved", "Overshoot", "Ledger"], f.budgets.map((b) => {
    const limit = (b.usd_limit !== null ? dollars(b.usd_limit) : `${b.token_limit} tokens`) + (b.signed ? "" : " (unsigned)");
    const spent = b.usd_limit !== null ? b.spent.usd : b.spent.tokens;
    const max = b.usd_limit !== null ? b.usd_limit : b.token_limit;
    const label = b.usd_limit !== null ? dollars(b.spent.usd) : `${b.spent.tokens} tokens`;
    const bar = el("span", {}, el("meter", { min: "0", max: String(Math.max(1, max)), value: String(spent), "aria-label": `${b.scope} spent` }), " " + label);
    const over = b.usd_limit !== null ? dollars(b.over.usd) : `${b.over.tokens} tokens`;
    return [b.scope === "*" ? "the whole fleet" : b.scope, limit, bar, b.usd_limit !== null ? dollars(b.granted.usd) : `${b.granted.tokens} tokens`,
      el("span", { class: b.over.usd || b.over.tokens ? "verify bad" : "", text: over }),
      el("span", { class: b.reconciles ? "verify ok" : "verify bad", text: b.reconciles ? "reconciles" : "DOES NOT RECONCILE" })];
  }));
  const problems = f.shipping.filter((s) => s.problem);
  const shipping = problems.length
    ? fleetTable("Shipping problems", ["Host", "Log", "Problem"], problems.map((s) => [s.host, s.log, el("span", { class: "verify bad", text: s.problem })]))
    : el("p", { text: `Audit shipping: ${f.shipping.length} log(s), no problem recorded (\`loopguard audit verify --fleet\` checks every chain).` });
  $("fleet").replaceChildren(el("p", { text: `fleet ${f.fleet} · ${f.hosts.length} host(s)` }), hosts, positions,
    f.budgets.length ? budgets : el("p", { text: "No budget was used today." }), shipping);
}

let fleetBusy = false;
async function refreshFleet() {
  // One request at a time: a slow database must not pile them up.
  if (fleetBusy) return;
  fleetBusy = true;
  try {
    const f = await api("/api/fleet");
    if (!f.fleet) return;
    $("fleet-panel").hidden = false;
    renderFleet(f);
  } catch (e) {
    if (!$("fleet-panel").hidden) $("fleet").replaceChildren(el("p", { class: "verify bad", text: "The fleet's database: " + e.message }));
  } finally {
    fleetBusy = false;
  }
}

// ---- live connection -----------------------------------------------------------------------

// Server-sent events over fetch (EventSource cannot send the session header).
async function connect() {
  let renderTimer = null;
  const renderSoon = () => { if (!renderTimer) renderTimer = requestAnimationFrame(() => { renderTimer = null; renderFeed(); }); };
  const onEvent = async (name, data) => {
    if (name === "hello") {
      $("conn").textContent = "live";
      $("conn").className = "conn live";
      try {
        const items = await api("/api/events?limit=300");
        for (const it of items) addItem(it, false);
        renderFeed();
      } catch (e) { /* the next hello retries */ }
      refresh();
    } else if (name === "lagged") {
      refreshSoon();
    } else {
      let msg;
      try { msg = JSON.parse(data); } catch (_) { return; }
      if (msg.type === "event") {
        if (addItem(msg.item, true)) renderSoon();
      } else if (msg.type === "state") {
        refreshSoon();
      }
    }
  };
  for (let wait = 500; ; wait = Math.min(wait * 2, 10000)) {
    try {
      const r = await fetch("/api/stream", { credentials: "omit", headers: { Authorization: "Bearer " + session() } });
      if (r.status === 401) {
        $("conn").textContent = "session ended — open a new link from `loopguard dashboard`";
        $("conn").className = "conn down";
        return;
      }
      if (!r.ok || !r.body) throw new Error("HTTP " + r.status);
      wait = 500;
      const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let cut;
        while ((cut = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          let name = "message", data = [];
          for (const line of block.split("\n")) {
            if (line.startsWith("event:")) name = line.slice(6).trim();
            else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
          }
          if (data.length || name !== "message") await onEvent(name, data.join("\n"));
        }
      }
    } catch (e) { /* reconnect below */ }
    $("conn").textContent = "disconnected — retrying";
    $("conn").className = "conn down";
    await new Promise((res) => setTimeout(res, wait));
  }
}

// ---- actions -------------------------------------------------------------------------------

function showFields() {
  const a = $("a-action").value;
  for (const n of document.querySelectorAll("#action-form [data-for]")) n.hidden = !n.dataset.for.split(" ").includes(a);
}

async function submitAction(e) {
  e.preventDefault();
  const out = $("action-result");
  const body = {
    ws: $("a-ws").value,
    action: $("a-action").value,
    operator: $("a-operator").value,
    passphrase: $("a-passphrase").value,
    reason: $("a-reason").value,
  };
  const opt = (k, id) => { const v = $(id).value.trim(); if (v) body[k] = v; };
  opt("to", "a-to"); opt("tool", "a-tool"); opt("resource", "a-resource"); opt("duration", "a-duration");
  const g = $("a-grant").value.trim();
  if (g) body.grant = Number(g);
  out.className = "";
  out.textContent = "Checking the passphrase…";
  $("a-submit").disabled = true;
  try {
    const r = await api("/api/action", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    out.className = "ok";
    out.textContent = r.message;
    refresh();
  } catch (err) {
    out.className = "err";
    out.textContent = "Refused: " + err.message;
  } finally {
    $("a-passphrase").value = "";
    $("a-submit").disabled = false;
  }
}

function left(secs) {
  secs = Math.max(0, Math.round(secs));
  return secs >= 120 ? `${Math.round(secs / 60)} min left` : `${secs} s left`;
}

// Once a second: cooldowns count down, rings drain, and what expired greys out — without asking
// the server (the next overview confirms it).
function tick() {
  for (const n of document.querySelectorAll(".countdown")) n.textContent = countdown(n.dataset.until);
  const now = Date.now() / 1000;
  for (const chip of document.querySelectorAll("[data-until][data-active='true']")) {
    const from = Number(chip.dataset.from), until = Number(chip.dataset.until);
    const frac = Math.max(0, Math.min(1, (until - now) / Math.max(1, until - from)));
    const arc = chip.querySelector(".ring .left");
    if (arc) arc.setAttribute("stroke-dashoffset", String(Number(arc.getAttribute("stroke-dasharray")) * (1 - frac)));
    const t = chip.querySelector(".left-text");
    if (until <= now) {
      chip.dataset.active = "false";
      chip.classList.add("expired");
      if (arc) arc.closest("svg").remove();
      if (t) t.textContent = "expired";
    } else if (t) {
      t.textContent = left(until - now);
    }
  }
}

document.addEventListener("DOMContentLoaded", async () => {
  for (const id of ["f-ws", "f-session", "f-decision", "f-reason"]) {
    $(id).addEventListener("input", () => {
      renderFeed();
      if (id !== "f-ws") return;
      renderPanels();
      // Acting on the workspace being looked at, never on another one by default.
      if ($("f-ws").value && [...$("a-ws").options].some((o) => o.value === $("f-ws").value)) $("a-ws").value = $("f-ws").value;
    });
  }
  $("a-action").addEventListener("change", showFields);
  $("action-form").addEventListener("submit", submitAction);
  showFields();
  const last = $("last-call");
  onDoubleActivate(last, () => { if (state.last && isShell(state.last)) expand(state.last); });
  last.addEventListener("keydown", (e) => { if ((e.key === "e" || e.key === "Enter") && state.last && isShell(state.last)) expand(state.last); });
  setInterval(tick, 1000);
  try {
    await login();
  } catch (e) {
    $("conn").textContent = "no session";
    $("conn").className = "conn down";
    $("breakers").replaceChildren(el("p", { text: "No session: " + e.message + ". Each link works once; start `loopguard dashboard` again for a new one." }));
    return;
  }
  connect();
  refreshFleet();
  setInterval(refreshFleet, 5000);
});
