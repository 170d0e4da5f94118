// The Connectors page: renders what api/connectors answers, refreshes itself, and sends the
// actions to the same API. Every text shown is set as text, never parsed as HTML.
"use strict";

const ACTIONS = [
  { id: "pause", label: "Pause", method: "PUT", path: "pause" },
  { id: "resume", label: "Resume", method: "PUT", path: "resume" },
  { id: "restart-failed", label: "Restart failed", method: "POST", path: "restart?includeTasks=true&onlyFailed=true" },
  { id: "restart-all", label: "Restart all", method: "POST", path: "restart?includeTasks=true&onlyFailed=false" },
  { id: "stop", label: "Stop", method: "PUT", path: "stop" },
  { id: "delete", label: "Delete", method: "DELETE", path: "", danger: true },
];

const page = {
  data: null,
  seen: "", // the last answer as text: an unchanged answer leaves the page as it is
  expanded: new Set(),
  timer: null,
};

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const badge = (state) => el("span", { class: `state state-${state}` }, state);
const json = (value) => (value === null || value === undefined ? "" : JSON.stringify(value));
const when = (iso) => (iso ? new Date(iso).toLocaleString() : "");

function show(id, text) {
  const node = document.getElementById(id);
  node.textContent = text || "";
  node.hidden = !text;
}

async function call(method, path) {
  const response = await fetch(path, {
    method,
    credentials: "same-origin",
    headers: { Accept: "application/json" },
  });
  const body = response.status === 204 ? null : await response.json().catch(() => null);
  if (!response.ok) {
    const detail = body && (body.message || body.detail);
    throw new Error(`${response.status} ${response.statusText}${detail ? `: ${JSON.stringify(detail)}` : ""}`);
  }
  return body;
}

async function refresh() {
  clearTimeout(page.timer);
  let interval = page.data ? page.data.refresh_interval_s : 5;
  try {
    const data = await call("GET", "api/connectors");
    interval = data.refresh_interval_s;
    show("error", "");
    const seen = JSON.stringify(data);
    if (seen !== page.seen) {
      page.data = data;
      page.seen = seen;
      render();
    }
    document.getElementById("refreshed").textContent = `Refreshed ${new Date().toLocaleTimeString()}`;
  } catch (error) {
    show("error", `Could not read the connectors: ${error.message}`);
  }
  page.timer = setTimeout(refresh, interval * 1000);
}

function matches(connector) {
  const name = document.getElementById("filter-name").value.trim().toLowerCase();
  const state = document.getElementById("filter-state").value;
  if (name && !connector.name.toLowerCase().includes(name)) return false;
  if (!state) return true;
  return connector.connector.state === state || connector.tasks.some((t) => t.state === state);
}

function render() {
  const body = document.querySelector("#connectors tbody");
  const shown = page.data.connectors.filter(matches);
  body.replaceChildren(
    ...shown.flatMap((c) => (page.expanded.has(c.name) ? [row(c), details(c)] : [row(c)])),
  );
  document.getElementById("empty").hidden = shown.length > 0;
  renderDeletions(page.data.deletions);
}

function row(c) {
  const counts = {};
  for (const task of c.tasks) counts[task.state] = (counts[task.state] || 0) + 1;
  const toggle = () => {
    if (page.expanded.has(c.name)) page.expanded.delete(c.name);
    else page.expanded.add(c.name);
    render();
  };
  return el(
    "tr",
    { class: "connector", "data-connector": c.name, onclick: toggle },
    el("td", {}, c.name, c.deleted ? el("span", { class: "muted" }, " (deleting)") : null),
    el("td", {}, c.type),
    el("td", { class: "mono" }, c.class),
    el("td", { "data-role": "state" }, badge(c.connector.state)),
    el("td", { "data-role": "tasks" }, Object.entries(counts).map(([state, n]) => [badge(state), ` ${n} `])),
  );
}

function details(c) {
  return el(
    "tr",
    { class: "details", "data-details": c.name },
    el(
      "td",
      { colspan: 5 },
      c.deleted ? null : actions(c),
      c.connector.trace ? traceButton(`Connector ${c.name}`, c.connector.trace) : null,
      el("h3", {}, "Tasks"),
      c.tasks.length === 0
        ? el("p", { class: "muted" }, "No task.")
        : table(
            ["Task", "State", "Worker", "Generation", ""],
            c.tasks.map((t) => [
              String(t.id),
              badge(t.state),
              t.worker_id,
              String(t.generation),
              t.trace ? traceButton(`Task ${c.name}-${t.id}`, t.trace, t.id) : "",
            ]),
          ),
      el("h3", {}, "Config"),
      table(["Key", "Value"], Object.entries(c.config).sort().map(([k, v]) => [k, el("span", { class: "mono" }, v)])),
      c.source_offsets.length === 0
        ? null
        : [
            el("h3", {}, "Source offsets"),
            table(
              ["Partition", "Offset"],
              c.source_offsets.map((o) => [el("span", { class: "mono" }, json(o.partition)), el("span", { class: "mono" }, json(o.offset))]),
            ),
          ],
      c.sink_progress.length === 0
        ? null
        : [
            el("h3", {}, "Sink progress"),
            table(
              ["Topic", "Partition", "Committed", "End", "Lag", "As of"],
              c.sink_progress.map((p) => [p.topic, String(p.partition), json(p.committed_offset), json(p.end_offset), json(p.lag), when(p.updated_at)]),
            ),
          ],
      c.deletion ? [el("h3", {}, "Last deletion"), deletionTable([c.deletion])] : null,
    ),
  );
}

function table(headings, rows) {
  return el(
    "table",
    { class: "inner" },
    el("thead", {}, el("tr", {}, headings.map((h) => el("th", {}, h)))),
    el("tbody", {}, rows.map((cells) => el("tr", {}, cells.map((cell) => el("td", {}, cell))))),
  );
}

function traceButton(title, trace, taskId) {
  const open = (event) => {
    event.stopPropagation();
    document.getElementById("trace-title").textContent = `${title} FAILED`;
    document.getElementById("trace-text").textContent = trace;
    document.getElementById("trace").showModal();
  };
  return el("button", { "data-trace": taskId === undefined ? "connector" : String(taskId), onclick: open }, "Show trace");
}

function actions(c) {
  return el(
    "div",
    { class: "actions" },
    ACTIONS.map((action) =>
      el(
        "button",
        {
          "data-action": action.id,
          class: action.danger ? "danger" : null,
          onclick: (event) => {
            event.stopPropagation();
            act(action, c.name);
          },
        },
        action.label,
      ),
    ),
  );
}

async function act(action, name) {
  if (action.id === "delete" && !(await confirmDelete(name))) return;
  const base = `api/connectors/${encodeURIComponent(name)}`;
  try {
    await call(action.method, action.path ? `${base}/${action.path}` : base);
    show("notice", `${action.label}: requested for ${name}; the runtime applies it at its next reconcile.`);
    show("error", "");
  } catch (error) {
    show("error", `${action.label} ${name} failed: ${error.message}`);
  }
  refresh();
}

function confirmDelete(name) {
  const dialog = document.getElementById("confirm-delete");
  document.getElementById("confirm-name").textContent = name;
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "delete"), { once: true });
  });
}

function deletionTable(deletions) {
  return table(
    ["Name", "Cleanup", "Requested", "Finished", ""],
    deletions.map((d) => [
      d.connector,
      badge(d.state),
      when(d.requested_at),
      when(d.finished_at),
      d.trace ? traceButton(`The connectorDeleted cleanup of ${d.connector}`, d.trace) : "",
    ]),
  );
}

function renderDeletions(deletions) {
  const section = document.getElementById("deletions");
  section.hidden = deletions.length === 0;
  section.querySelector("table").replaceWith(deletionTable(deletions));
}

// The task-instance tab: the connector the task's rendered `connector_name` names. The UI
// fills in {MAP_INDEX} only for mapped tasks.
async function connectorOfTask(params) {
  const parts = ["dags", params.get("dag_id"), "dagRuns", params.get("run_id"), "taskInstances", params.get("task_id")];
  const mapIndex = params.get("map_index");
  if (/^\d+$/.test(mapIndex)) parts.push(mapIndex);
  const instance = await call("GET", `../api/v2/${parts.map(encodeURIComponent).join("/")}`);
  return (instance.rendered_fields || {}).connector_name || null;
}

async function start() {
  const params = new URLSearchParams(window.location.search);
  let focus = params.get("connector");
  if (!focus && params.get("task_id")) {
    const task = params.get("task_id");
    try {
      focus = await connectorOfTask(params);
      if (!focus) show("notice", `Task ${task} names no connector (or has not run yet): every connector is shown.`);
    } catch (error) {
      show("notice", `Could not read task ${task} (${error.message}): every connector is shown.`);
    }
  }
  if (focus) {
    document.getElementById("filter-name").value = focus;
    page.expanded.add(focus);
  }
  for (const id of ["filter-name", "filter-state"]) {
    document.getElementById(id).addEventListener("input", () => page.data && render());
  }
  refresh();
}

start();
