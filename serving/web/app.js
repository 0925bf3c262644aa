// The consultant chat: talks to /v1/sessions on the same server; no external assets.
"use strict";
const PARAMS = ["time_horizon", "demand_type", "demand_distribution", "perishability", "state_transition_model",
  "holding_cost", "penalty_cost", "setup_cost", "lead_time", "max_inventory", "max_order", "risk_tolerance"];
const $ = (id) => document.getElementById(id);
let sessionId = localStorage.getItem("askopt.session") || null;
let plottedFor = null; // the session whose inventory plot is on the page
$("key").value = localStorage.getItem("askopt.key") || "";

function headers() {
  const h = { "Content-Type": "application/json" };
  const key = $("key").value.trim();
  if (key) h["Authorization"] = "Bearer " + key;
  return h;
}

async function fetchOk(method, path, body) {
  localStorage.setItem("askopt.key", $("key").value.trim());
  const r = await fetch(path, { method, headers: headers(), body: body ? JSON.stringify(body) : undefined });
  if (!r.ok) {
    const data = await r.json().catch(() => ({}));
    throw new Error((data.error && data.error.message) || ("HTTP " + r.status));
  }
  return r;
}

async function call(method, path, body) {
  return (await fetchOk(method, path, body)).json();
}

function addMessage(role, text) {
  const div = document.createElement("div");
  div.className = "msg " + role;
  div.textContent = text;
  $("chat").appendChild(div);
  $("chat").scrollTop = $("chat").scrollHeight;
}

function renderTable(table, stage) {
  const body = $("params").querySelector("tbody");
  body.replaceChildren();
  for (const p of PARAMS) {
    const row = (table && table[p]) || { value: null, status: "undefined" };
    const tr = document.createElement("tr");
    tr.className = row.status;
    tr.dataset.param = p;
    for (const [cls, text] of [["name", p], ["value", row.value ?? ""], ["status", row.status]]) {
      const td = document.createElement("td");
      td.className = cls;
      td.textContent = text;
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
  $("stage").textContent = stage ? "(" + stage + ")" : "";
}

function renderPolicy(state) {
  if (!state.policy) { $("policy").hidden = true; return; }
  $("policy").hidden = false;
  const p = state.policy;
  $("policy-text").textContent = `${p.label || p.name}: mean cost ${Number(p.mean_cost).toFixed(2)}`;
  plotCosts(state.scores || [], p.name);
  if (plottedFor !== sessionId) loadInventoryPlot().catch((e) => { $("status").textContent = e.message; });
}

// The server draws the SVG (serving/session_views.py: numbers and escaped labels only); fetched with the key.
async function loadInventoryPlot() {
  plottedFor = sessionId;
  const r = await fetchOk("GET", `v1/sessions/${sessionId}/inventory.svg`);
  const svg = new DOMParser().parseFromString(await r.text(), "image/svg+xml").documentElement;
  $("inventory-plot").replaceChildren(document.importNode(svg, true));
}

function renderScenario(scenario) {
  $("scenario").hidden = !scenario;
  if (!scenario) return;
  $("scenario-context").textContent = scenario.context;
  const body = $("scenario-facts").querySelector("tbody");
  body.replaceChildren();
  for (const [name, value] of Object.entries(scenario.facts || {})) {
    const tr = document.createElement("tr");
    for (const text of [name, value]) {
      const td = document.createElement("td");
      td.textContent = text;
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
}

async function download(name) {
  const r = await fetchOk("GET", `v1/sessions/${sessionId}/artifacts/${name}`);
  const url = URL.createObjectURL(await r.blob());
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

function plotCosts(scores, winner) {
  const svg = $("cost-plot");
  const ns = "http://www.w3.org/2000/svg";
  svg.replaceChildren();
  if (!scores.length) return;
  const W = 420, H = 200, pad = 30, bw = (W - 2 * pad) / scores.length;
  const top = Math.max(...scores.map((s) => (s.mean_cost || 0) + (s.std_cost || 0))) || 1;
  const y = (v) => H - pad - (v / top) * (H - 2 * pad);
  scores.forEach((s, i) => {
    const x = pad + i * bw + bw * 0.15, w = bw * 0.7;
    const bar = document.createElementNS(ns, "rect");
    Object.entries({ x, y: y(s.mean_cost || 0), width: w, height: H - pad - y(s.mean_cost || 0),
      fill: s.name === winner ? "#2a6fb0" : "#8fb3d9",
      class: s.name === winner ? "bar winner" : "bar" }).forEach(([k, v]) => bar.setAttribute(k, v));
    svg.appendChild(bar);
    const err = document.createElementNS(ns, "line");
    const cx = x + w / 2;
    Object.entries({ x1: cx, x2: cx, y1: y((s.mean_cost || 0) - (s.std_cost || 0)),
      y2: y((s.mean_cost || 0) + (s.std_cost || 0)), stroke: "#333" }).forEach(([k, v]) => err.setAttribute(k, v));
    svg.appendChild(err);
    const label = document.createElementNS(ns, "text");
    label.setAttribute("x", cx); label.setAttribute("y", H - 10); label.setAttribute("text-anchor", "middle");
    label.setAttribute("font-size", "11");
    label.textContent = `${s.name} ${Number(s.mean_cost).toFixed(0)}`;
    svg.appendChild(label);
  });
}

function render(state) {
  renderScenario(state.scenario);
  renderTable(state.table, state.stage);
  renderPolicy(state);
}

async function newSession() {
  $("status").textContent = "";
  $("chat").replaceChildren();
  $("order-answer").textContent = "";
  plottedFor = null;
  $("inventory-plot").replaceChildren();
  const s = await call("POST", "v1/sessions");
  sessionId = s.session_id;
  localStorage.setItem("askopt.session", sessionId);
  addMessage("assistant", s.reply);
  render(s);
}

async function resume() {
  if (!sessionId) return newSession();
  try {
    const s = await call("GET", "v1/sessions/" + sessionId);
    for (const [role, text] of s.transcript || []) addMessage(role === "user" ? "user" : "assistant", text);
    render(s);
  } catch (e) {
    return newSession();
  }
}

$("send-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const text = $("message").value.trim();
  if (!text) return;
  $("message").value = "";
  addMessage("user", text);
  $("send").disabled = true;
  $("status").textContent = "";
  try {
    // an id of its own, so that a retried send is applied once (the server answers a repeat from the session)
    const messageId = (crypto.randomUUID ? crypto.randomUUID() : String(Date.now()) + "-" + Math.random())
      .replace(/[^A-Za-z0-9_.:-]/g, "");
    const s = await call("POST", `v1/sessions/${sessionId}/messages`, { message: text, message_id: messageId });
    addMessage("assistant", s.reply);
    render(s);
  } catch (e) {
    $("status").textContent = e.message;
  } finally {
    $("send").disabled = false;
  }
});
$("order-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  $("order-answer").textContent = "";
  try {
    const out = await call("POST", `v1/sessions/${sessionId}/order`, {
      on_hand: Number($("on-hand").value), in_transit: Number($("in-transit").value || 0) });
    $("order-answer").textContent = out.answer;
  } catch (e) {
    $("order-answer").textContent = e.message;
  }
});
for (const id of ["dl-config", "dl-csv"]) {
  $(id).addEventListener("click", () => download($(id).dataset.name).catch((e) => { $("status").textContent = e.message; }));
}
$("new").addEventListener("click", () => newSession().catch((e) => { $("status").textContent = e.message; }));
renderTable(null, "");
resume().catch((e) => { $("status").textContent = e.message; });
