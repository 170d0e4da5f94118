// The Connectors page: renders what api/connectors answers, refreshes itself, and sends the
// actions and the create/edit forms to the same API. Every text shown is set as text, never
// parsed as HTML.
"use strict";

// What a connector's desired state (target_state) makes it once the runtime applied it.
const SETTLED = { STARTED: "RUNNING", PAUSED: "PAUSED", STOPPED: "STOPPED" };

const stopped = (c) => c.target_state === "STOPPED" && c.connector.state === "STOPPED";
const failed = (c) => c.connector.state === "FAILED" || c.tasks.some((t) => t.state === "FAILED");

// Each action's `blocked(c)` says why the connector's state does not allow it (null: allowed),
// as Kafka Connect's REST API and the runtime treat them: pause a running connector, resume a
// paused or stopped one, stop any but a stopped one, restart a started one that runs or
// failed. The desired state counts as soon as it is written: a pause requested makes Pause
// unavailable and Resume available before the runtime applied it. `done(c)` says when the
// runtime applied the request (the page refreshes quickly until then).
const ACTIONS = [
  {
    id: "pause",
    label: "Pause",
    method: "PUT",
    path: "pause",
    blocked: (c) =>
      c.target_state !== "STARTED"
        ? `It is ${c.target_state === "PAUSED" ? "paused" : "stopped"} (or being so): resume it first.`
        : c.connector.state !== "RUNNING"
          ? `Only a RUNNING connector pauses; this one is ${c.connector.state}.`
          : null,
    done: (c) => c.connector.state === "PAUSED",
  },
  {
    id: "resume",
    label: "Resume",
    method: "PUT",
    path: "resume",
    blocked: (c) =>
      c.target_state === "STARTED" ? "It is not paused or stopped (or a resume is under way)." : null,
    done: (c) => c.connector.state === "RUNNING" || c.connector.state === "FAILED",
  },
  {
    id: "restart-failed",
    label: "Restart failed",
    method: "POST",
    path: "restart?includeTasks=true&onlyFailed=true",
    blocked: (c) =>
      c.target_state !== "STARTED"
        ? "A paused or stopped connector does not restart: resume it."
        : !failed(c)
          ? "Neither the connector nor any of its tasks FAILED."
          : null,
    done: (c) => !failed(c),
  },
  {
    id: "restart-all",
    label: "Restart all",
    method: "POST",
    path: "restart?includeTasks=true&onlyFailed=false",
    blocked: (c) =>
      c.target_state !== "STARTED"
        ? "A paused or stopped connector does not restart: resume it."
        : c.connector.state !== "RUNNING" && !failed(c)
          ? `Only a RUNNING or FAILED connector restarts; this one is ${c.connector.state}.`
          : null,
    done: () => false,
  },
  {
    id: "stop",
    label: "Stop",
    method: "PUT",
    path: "stop",
    blocked: (c) => (c.target_state === "STOPPED" ? "It is stopped (or being stopped)." : null),
    done: (c) => c.connector.state === "STOPPED",
  },
  {
    id: "delete",
    label: "Delete",
    method: "DELETE",
    path: "",
    danger: true,
    // Asked first: what it does, and the button that does it.
    confirm: (name) => [
      ["Delete connector ", el("b", {}, name), "? Its tasks stop with ", el("code", {}, "connectorDeleted=true"), " and run their cleanup."],
      "Delete",
    ],
    blocked: () => null,
    done: () => false, // until it is gone
  },
];

const BANNER_MS = { notice: 10000, error: 30000 }; // how long a banner stays, unless dismissed
const WATCH_MS = 15000; // how long the page refreshes quickly after an action
const WATCH_INTERVAL_S = 0.5;

const page = {
  data: null,
  seen: "", // the last answer as text: an unchanged answer leaves the page as it is
  expanded: new Set(),
  timer: null,
  asked: 0, // refreshes asked for, and the latest that answered: an older answer is dropped
  answered: 0,
  focus: null, // the connector the page was opened on (?connector= or the task's)
  banners: { notice: null, error: null }, // {connector, seen, timer}
  watch: null, // {name, action, until}: the last action, until the runtime applied it
  form: null, // {name, asked, open}: name when editing a connector, null when creating one
  plugins: null, // the connector plugins the form offers, read when it first opens
  classNames: new Set(), // every name the form offers for them: a class typed as one is checked at once
  history: null, // {window_s, connectors}: the charts' samples, read while a row is open
  offsets: null, // the connector whose offsets the offsets dialog changes
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
const byName = (name) => (page.data ? page.data.connectors.find((c) => c.name === name) : undefined);

// -- times: as Airflow shows them ("2026-12-05 22:48:44", 24-hour), in the zone Airflow's UI
// is set to (its user's choice, which it keeps in this origin's localStorage as "timezone"),
// else in Airflow's [core] default_timezone (api/connectors names it), else in UTC.
const TIME_PARTS = { year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" };
const timeFormats = new Map(); // by zone; null for a zone this browser does not know

function timeFormat(zone) {
  if (!timeFormats.has(zone)) {
    let format = null;
    try {
      format = new Intl.DateTimeFormat("en-US", { ...TIME_PARTS, timeZone: zone });
    } catch {
      // no such zone here: the next one is used
    }
    timeFormats.set(zone, format);
  }
  return timeFormats.get(zone);
}

function timezone() {
  let chosen = null;
  try {
    chosen = JSON.parse(localStorage.getItem("timezone"));
  } catch {
    // not set by Airflow's UI, or not JSON
  }
  const configured = page.data && page.data.timezone;
  return [chosen, configured].find((zone) => typeof zone === "string" && zone && timeFormat(zone)) || "UTC";
}

// The moment `iso` as a <time> element, its zone in its title ("" when there is none).
function when(iso) {
  if (!iso) return "";
  const zone = timezone();
  const parts = Object.fromEntries(timeFormat(zone).formatToParts(new Date(iso)).map((p) => [p.type, p.value]));
  const shown = `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}`;
  return el("time", { datetime: iso, title: zone }, shown);
}

// -- banners: a notice and an error, each about one connector (or none) -------------------
function banner(kind, text, connector) {
  clearBanner(kind);
  const node = document.getElementById(kind);
  node.querySelector(".banner-text").textContent = text;
  node.dataset.connector = connector || "";
  node.hidden = false;
  page.banners[kind] = { connector, seen: false, timer: setTimeout(() => clearBanner(kind), BANNER_MS[kind]) };
}

function clearBanner(kind) {
  const shown = page.banners[kind];
  if (shown) clearTimeout(shown.timer);
  page.banners[kind] = null;
  const node = document.getElementById(kind);
  node.hidden = true;
  node.querySelector(".banner-text").textContent = "";
}

// A banner about a connector goes once a refresh that found the connector no longer does
// (an error about one already gone stays until dismissed or timed out).
function followBanners() {
  for (const [kind, shown] of Object.entries(page.banners)) {
    if (!shown || !shown.connector) continue;
    if (byName(shown.connector)) shown.seen = true;
    else if (shown.seen) clearBanner(kind);
  }
}

function readError(text) {
  const node = document.getElementById("read-error");
  node.textContent = text || "";
  node.hidden = !text;
}

// -- the API --------------------------------------------------------------------------------
// The answer's status and message (Kafka Connect's `message`, or FastAPI's `detail`): a
// 503 says the metadata database cannot be reached, naming it and the cause.
class ApiError extends Error {
  constructor(response, body) {
    const detail = body && (body.message || body.detail);
    const said = typeof detail === "string" ? detail : JSON.stringify(detail);
    super(`${response.status} ${response.statusText}${detail ? `: ${said}` : ""}`);
    this.status = response.status;
    this.body = body;
  }
}

async function call(method, path, body) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method,
    credentials: "same-origin",
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = response.status === 204 ? null : await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response, answer);
  return answer;
}

async function refresh() {
  const asked = ++page.asked;
  let interval = page.data ? page.data.refresh_interval_s : 5;
  try {
    const [data, history] = await Promise.all([
      call("GET", "api/connectors"),
      page.expanded.size ? call("GET", "api/history").catch(() => page.history) : null, // charts as last read
    ]);
    if (asked < page.answered) return; // a later refresh has answered (and set the timer)
    page.answered = asked;
    interval = data.refresh_interval_s;
    readError("");
    const seen = JSON.stringify([data, history]);
    if (seen !== page.seen) {
      page.data = data;
      page.history = history;
      page.seen = seen;
      render();
    }
    followBanners();
    document.getElementById("refreshed").replaceChildren("Refreshed ", when(new Date().toISOString()), ` (${timezone()})`);
  } catch (error) {
    const shown = page.data ? "the list below is as last read; " : "";
    readError(`Could not read the connectors: ${error.message} (${shown}trying again every ${interval} s)`);
  }
  if (watching()) interval = Math.min(interval, WATCH_INTERVAL_S);
  clearTimeout(page.timer); // one timer, whichever refresh answered last
  page.timer = setTimeout(refresh, interval * 1000);
}

// True while the last action waits for the runtime to apply it (or for its connector to go).
function watching() {
  const watch = page.watch;
  const c = watch && byName(watch.name);
  if (!watch || Date.now() > watch.until || (page.data && (!c || watch.action.done(c)))) {
    page.watch = null;
    return false;
  }
  return true;
}

// -- filters --------------------------------------------------------------------------------
function filters() {
  return {
    name: document.getElementById("filter-name").value.trim().toLowerCase(),
    state: document.getElementById("filter-state").value,
  };
}

function matches(connector) {
  const { name, state } = filters();
  if (name && !connector.name.toLowerCase().includes(name)) return false;
  if (!state) return true;
  return connector.connector.state === state || connector.tasks.some((t) => t.state === state);
}

// A deletion matches the name filter as connectors do, and a state filter by its cleanup's
// state (FAILED: a cleanup that failed); no running state matches a deleted connector.
function deletionMatches(deletion) {
  const { name, state } = filters();
  if (name && !deletion.connector.toLowerCase().includes(name)) return false;
  return !state || deletion.state === state;
}

// -- rendering ------------------------------------------------------------------------------
function render() {
  const body = document.querySelector("#connectors tbody");
  const shown = page.data.connectors.filter(matches);
  body.replaceChildren(
    ...shown.flatMap((c) => (page.expanded.has(c.name) ? [row(c), details(c)] : [row(c)])),
  );
  const gone = page.data.deletions.filter(deletionMatches);
  renderEmpty(shown, gone);
  renderDeletions(gone);
}

// Why a connector or task is not running yet: what it waits on (a topic, ...), or the
// trace of an UNASSIGNED one (a Spark task slot).
function why(entry) {
  if (entry.waiting_on) return `Waiting on ${entry.waiting_on}`;
  if (entry.state === "UNASSIGNED" && entry.trace) return entry.trace;
  return null;
}

function stateCell(entry, pending) {
  const reason = why(entry);
  return [
    badge(entry.state),
    pending ? el("span", { class: "pending", "data-role": "pending", title: "Requested; the runtime applies it at its next reconcile" }, ` → ${pending}`) : null,
    reason ? el("div", { class: "why", "data-role": "why" }, reason) : null,
  ];
}

// The state the connector was asked for and has not reached yet (null when it has).
function pendingState(c) {
  const settled = SETTLED[c.target_state];
  const state = c.connector.state;
  if (c.deleted || !settled || state === settled || state === "FAILED") return null;
  if (c.target_state === "STARTED" && state !== "PAUSED" && state !== "STOPPED") return null;
  return settled;
}

function row(c) {
  const counts = {};
  for (const task of c.tasks) counts[task.state] = (counts[task.state] || 0) + 1;
  const reasons = c.tasks.map((t) => [t.id, why(t)]).filter(([, reason]) => reason);
  const toggle = () => {
    if (page.expanded.has(c.name)) page.expanded.delete(c.name);
    else page.expanded.add(c.name);
    render();
    if (!page.history && page.expanded.size) refresh(); // its charts: at once
  };
  return el(
    "tr",
    { class: "connector", "data-connector": c.name, onclick: toggle },
    el("td", {}, c.name, c.deleted ? el("span", { class: "muted" }, " (deleting)") : null),
    el("td", {}, c.type),
    el("td", { class: "mono" }, c.class),
    el("td", { "data-role": "state" }, stateCell(c.connector, pendingState(c))),
    el(
      "td",
      { "data-role": "tasks", title: reasons.map(([id, reason]) => `Task ${id}: ${reason}`).join("\n") || null },
      Object.entries(counts).map(([state, n]) => [badge(state), ` ${n} `]),
    ),
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
      c.connector.trace && c.connector.state === "FAILED" ? traceButton(`Connector ${c.name} FAILED`, c.connector.trace) : null,
      el("h3", {}, "Tasks"),
      c.tasks.length === 0
        ? el("p", { class: "muted" }, "No task.")
        : table(
            ["Task", "State", "Worker", "Generation", ""],
            c.tasks.map((t) => [
              String(t.id),
              el("div", { "data-task": String(t.id) }, stateCell(t)),
              t.worker_id,
              String(t.generation),
              t.trace && t.state === "FAILED" ? traceButton(`Task ${c.name}-${t.id} FAILED`, t.trace, t.id) : "",
            ]),
          ),
      logTails(c.tasks),
      charts(c),
      pluginMetrics(c.tasks),
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
      c.staged_offsets === null
        ? null
        : [
            el("h3", {}, c.staged_offsets_alter ? "Offsets altered in its consumer group before it next starts (other partitions keep theirs)" : "Offsets written to its consumer group before it next starts"),
            c.staged_offsets.length === 0
              ? el("p", { class: "muted", "data-role": "staged" }, "None: its consumer group goes (a reset).")
              : table(
                  ["Topic", "Partition", "Offset"],
                  c.staged_offsets.map((o) => [o.partition.kafka_topic, String(o.partition.kafka_partition), String(o.offset.kafka_offset)]),
                ),
          ],
      c.deletion ? [el("h3", {}, "Last deletion"), deletionTable([c.deletion])] : null,
    ),
  );
}

// A FAILED task run's last log lines, which its trace ends with (and where its whole log is).
const TAIL = "Last log lines of this task run";

function logTails(tasks) {
  return tasks
    .filter((t) => t.state === "FAILED" && t.trace && t.trace.includes(TAIL))
    .map((t) => [el("h3", {}, `Log tail of task ${t.id}`), el("pre", { class: "log-tail", "data-log-tail": String(t.id) }, t.trace.slice(t.trace.lastIndexOf(TAIL)))]);
}

// -- charts: throughput and lag over the last hour, from the samples the runtime keeps --
const SVG = "http://www.w3.org/2000/svg";
const CHART = { width: 420, height: 120, left: 56, bottom: 18 };

function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  node.append(...children);
  return node;
}

// "paused" or "stopped" while a connector is so, or being so: it moves nothing, so it has no
// current rate (its last sample may still show what it moved before); null otherwise.
function idle(c) {
  const state = c.target_state === "STARTED" ? c.connector.state : SETTLED[c.target_state];
  return state === "PAUSED" || state === "STOPPED" ? state.toLowerCase() : null;
}

// A count (records, lag) as a whole number; a rate with a decimal below 100.
const count = (v) => Math.round(v).toLocaleString("en-US");
const rate = (v) => (v >= 100 ? count(v) : v.toFixed(1));

function charts(c) {
  const history = page.history && page.history.connectors[c.name];
  if (!history) return [el("h3", {}, "Last hour"), el("p", { class: "muted" }, "No sample yet: the runtime keeps one every metrics.history.interval.ms.")];
  const lag = history.lag.filter(([, v]) => v !== null);
  const moved = history.records.reduce((sum, [, n]) => sum + n, 0);
  const now = idle(c) && `${idle(c)}: no current rate`;
  return [
    el("h3", {}, "Last hour ", el("span", { class: "muted", "data-role": "moved", "data-records": String(moved) }, `(${count(moved)} records moved)`)),
    el(
      "div",
      { class: "charts" },
      chart("Records per second", history.records_per_s, "throughput", rate, now),
      lag.length ? chart("Lag (records)", lag, "lag", count) : null,
    ),
  ];
}

// A line from zero to the highest value, over the window or, while the samples span less
// of it, over the time since the first (now on the right); its values and axis as `shown`
// writes them, and its last value as the current one unless `now` says why there is none.
function chart(title, points, role, shown, now) {
  if (!points.length) return el("p", { class: "muted", "data-chart": role }, `${title}: not yet (a rate needs two samples).`);
  const { width, height, left, bottom } = CHART;
  const at = Date.now();
  const first = Date.parse(points[0][0]);
  const windowMs = Math.max(1000, Math.min(page.history.window_s * 1000, at - first));
  const span = windowMs < 120000 ? `-${Math.round(windowMs / 1000)} s` : `-${Math.round(windowMs / 60000)} min`;
  const top = Math.max(1, ...points.map(([, v]) => v));
  const x = (iso) => left + ((width - left) * (windowMs - (at - Date.parse(iso)))) / windowMs;
  const y = (v) => (height - bottom) * (1 - v / top);
  const line = points.map(([when, v]) => `${x(when).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  const last = points[points.length - 1][1];
  return el(
    "figure",
    { class: "chart", "data-chart": role, "data-top": String(top) },
    el("figcaption", {}, title, el("span", { class: "muted", "data-role": "now" }, ` ${now || `now ${shown(last)}`}`)),
    svg(
      "svg",
      { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": title },
      svg("line", { x1: left, y1: height - bottom, x2: width, y2: height - bottom, class: "axis" }),
      svg("line", { x1: left, y1: 0, x2: left, y2: height - bottom, class: "axis" }),
      svg("text", { x: left - 4, y: 10, "text-anchor": "end", "data-tick": "top" }, shown(top)),
      svg("text", { x: left - 4, y: height - bottom, "text-anchor": "end", "data-tick": "zero" }, "0"),
      svg("text", { x: left, y: height - 4 }, span),
      svg("text", { x: width, y: height - 4, "text-anchor": "end" }, "now"),
      svg("polyline", { points: line, class: "series" }),
    ),
  );
}

// The metrics tasks and their plugins registered (KIP-877), e.g. a change-capture task's
// replication slot: their names are encoded as JSON arrays [group, name, description, tags].
function pluginMetrics(tasks) {
  const rows = [];
  for (const t of tasks) {
    for (const [key, value] of Object.entries(t.metrics || {})) {
      if (!key.startsWith("[")) continue;
      const [, name, description] = JSON.parse(key);
      const shown = Number.isInteger(value) ? value.toLocaleString("en-US") : value.toFixed(1);
      rows.push([String(t.id), el("span", { title: description, "data-metric": name }, name), shown]);
    }
  }
  return rows.length === 0 ? null : [el("h3", {}, "Task metrics"), table(["Task", "Metric", "Value"], rows)];
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
    document.getElementById("trace-title").textContent = title;
    document.getElementById("trace-text").textContent = trace;
    document.getElementById("trace").showModal();
  };
  return el("button", { "data-trace": taskId === undefined ? "connector" : String(taskId), onclick: open }, "Show trace");
}

function actions(c) {
  const button = (id, label, blocked, onclick, danger) =>
    el(
      "button",
      {
        "data-action": id,
        class: danger ? "danger" : null,
        disabled: Boolean(blocked),
        title: blocked || null,
        onclick: (event) => {
          event.stopPropagation();
          onclick();
        },
      },
      label,
    );
  return el(
    "div",
    { class: "actions" },
    ACTIONS.map((action) => button(action.id, action.label, action.blocked(c), () => act(action, c.name), action.danger)),
    button("edit", "Edit config", null, () => openForm(c)),
    button("offsets", "Offsets", stopped(c) ? null : "Only a STOPPED connector's offsets change (KIP-875): stop it first.", () => openOffsets(c)),
  );
}

async function act(action, name) {
  if (action.confirm && !(await confirmed(...action.confirm(name)))) return;
  const base = `api/connectors/${encodeURIComponent(name)}`;
  try {
    await call(action.method, action.path ? `${base}/${action.path}` : base);
    clearBanner("error");
    banner("notice", `${action.label}: requested for ${name}; the runtime applies it at its next reconcile.`, name);
    page.watch = { name, action, until: Date.now() + WATCH_MS };
  } catch (error) {
    banner("error", `${action.label} ${name} failed: ${error.message}`, name);
  }
  refresh();
}

// Asks before a destructive action (`question`: text and elements; `label`: the button that
// does it): true once that button is clicked, false when cancelled or closed with Escape.
function confirmed(question, label) {
  const dialog = document.getElementById("confirm");
  document.getElementById("confirm-text").replaceChildren(...question);
  document.getElementById("confirm-button").textContent = label;
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "confirm"), { once: true });
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
      d.trace ? traceButton(`The connectorDeleted cleanup of ${d.connector} ${d.state}`, d.trace) : "",
    ]),
  );
}

function renderDeletions(deletions) {
  const section = document.getElementById("deletions");
  section.hidden = deletions.length === 0;
  section.querySelector("table").replaceWith(deletionTable(deletions));
}

// When no connector matches: what became of the connector the page was opened on (the
// task's, once the DAG's teardown deleted it), or that deleted ones match.
function renderEmpty(shown, gone) {
  const empty = document.getElementById("empty");
  empty.hidden = shown.length > 0;
  document.getElementById("connectors").hidden = shown.length === 0;
  const deletion = gone.find((d) => d.connector === page.focus);
  empty.dataset.deletion = deletion ? deletion.state : "";
  empty.className = deletion ? "notice" : "muted";
  if (deletion) empty.replaceChildren(...deletionSentence(deletion));
  else if (gone.length > 0) empty.replaceChildren("No connector matches; deleted ones do (below).");
  else empty.replaceChildren("No connector matches.");
}

function deletionSentence(d) {
  const asked = [el("b", {}, d.connector), " was deleted (requested ", when(d.requested_at), ")"];
  if (d.state === "DONE") return [...asked, "; its connectorDeleted cleanup finished ", when(d.finished_at), "."];
  if (d.state === "FAILED") {
    return [
      ...asked,
      "; its connectorDeleted cleanup FAILED ",
      when(d.finished_at),
      ". ",
      d.trace ? traceButton(`The connectorDeleted cleanup of ${d.connector} FAILED`, d.trace) : "",
    ];
  }
  return [...asked, "; its connectorDeleted cleanup has not finished yet."];
}

// -- the create and edit form ------------------------------------------------------------
// The form is drawn from what Kafka Connect's config/validate answers for the config it
// holds: a field for each key the connector or the framework defines, the connector's own
// first, in their groups and order, with type, default, documentation and recommended
// values, a mark on each required key (one without a default), and the errors of each key
// under its field. It asks again at each change (a class as soon as it is typed or picked
// from the list), and before writing: a config with errors is never sent. Keys nothing
// defines stay in "Extra keys" as JSON.
const TOP_FIELDS = new Set(["name", "connector.class"]);

function formElement(id) {
  return document.getElementById(id);
}

async function openForm(c) {
  page.form = { name: c ? c.name : null, asked: 0, open: new Set() };
  formElement("form-name").value = c ? c.name : "";
  formElement("form-name").readOnly = Boolean(c);
  formElement("form-title").textContent = c ? `Edit the config of ${c.name}` : "New connector";
  formElement("form-submit").textContent = c ? "Save" : "Create";
  formElement("form-start").hidden = Boolean(c); // a new connector's only
  formElement("form-initial-state").value = "RUNNING";
  formElement("form-fields").replaceChildren();
  formElement("form-checked").textContent = "";
  const config = c ? { ...c.config } : {};
  formElement("form-class").value = config["connector.class"] || "";
  delete config["connector.class"];
  delete config.name;
  formElement("form-config").value = Object.keys(config).length ? JSON.stringify(config, null, 2) : "";
  formErrors([]);
  formElement("connector-form").showModal();
  await Promise.all([offerClasses(), checkForm()]);
}

// The connector classes installed where Airflow runs (as the runtime's /connector-plugins),
// offered for the class field by each name a config may give them: the class name it is
// known by (Kafka's, Debezium's, ...) and its short names (FileStreamSource); any class on
// the path may be named too.
async function offerClasses() {
  if (!page.plugins) {
    const plugins = await call("GET", "api/connector-plugins").catch(() => null); // asked again next time
    if (plugins) {
      page.plugins = plugins;
      const options = plugins.flatMap((p) => [
        el("option", { value: p.class }, `${p.type} ${p.version}`),
        ...p.aliases.map((alias) => el("option", { value: alias }, `${p.type} ${p.version}: ${p.class}`)),
      ]);
      page.classNames = new Set(options.map((o) => o.value));
      formElement("form-classes").replaceChildren(...options);
    }
  }
}

// A class typed or picked: checked at once when it is one the list offers (another is
// checked when the field is left, so that a half-typed name is not an error).
function classTyped() {
  if (page.classNames.has(formElement("form-class").value.trim())) checkForm();
}

// The config the form holds: its fields over "Extra keys" (a JSON object of strings,
// numbers and booleans, or Kafka Connect's whole {"name", "config"} body, whose
// initial_state and initial_offsets, KIP-980 and KIP-995, a new connector takes).
function formConfig() {
  let parsed;
  try {
    parsed = JSON.parse(formElement("form-config").value.trim() || "{}");
  } catch (error) {
    throw [`Extra keys are not JSON: ${error.message}`];
  }
  if (parsed && typeof parsed.config === "object" && parsed.config && !Array.isArray(parsed.config)) {
    if (!formElement("form-name").value.trim() && typeof parsed.name === "string") formElement("form-name").value = parsed.name;
    if (parsed.initial_state !== undefined) {
      const starts = formElement("form-initial-state");
      starts.value = String(parsed.initial_state).toUpperCase();
      if (!starts.value) {
        starts.value = "RUNNING";
        throw [`initial_state: must be RUNNING, PAUSED or STOPPED, not ${JSON.stringify(parsed.initial_state)}`];
      }
    }
    if (parsed.initial_offsets !== undefined) page.form.initialOffsets = parsed.initial_offsets;
    parsed = parsed.config;
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw ["Extra keys must be a JSON object of keys and values."];
  const config = {};
  const wrong = [];
  for (const [key, value] of Object.entries(parsed)) {
    if (typeof value === "string") config[key] = value;
    else if (typeof value === "number" || typeof value === "boolean") config[key] = String(value);
    else wrong.push(`${key}: must be a string, a number or a boolean`);
  }
  if (wrong.length) throw wrong;
  if (config["connector.class"]) formElement("form-class").value = config["connector.class"];
  // A field's key is in "Extra keys" only when just pasted there: then it counts.
  for (const input of formElement("form-fields").querySelectorAll("[data-input]")) {
    if (input.value !== "" && !(input.dataset.input in config)) config[input.dataset.input] = input.value;
  }
  config["connector.class"] = formElement("form-class").value.trim();
  config.name = formElement("form-name").value.trim();
  return config;
}

// Asks config/validate for the config the form holds and redraws the form from the answer;
// returns the answer (null when there is no class to ask about or the config is no JSON).
async function checkForm() {
  let config;
  try {
    config = formConfig();
  } catch (lines) {
    formErrors(lines);
    return null;
  }
  if (!config["connector.class"]) {
    formElement("form-checked").textContent = "Choose a connector: its settings appear here.";
    return null;
  }
  const form = page.form;
  const asked = ++form.asked;
  const current = () => form === page.form && asked === form.asked; // no later change asked again
  const query = form.name ? `?connector=${encodeURIComponent(form.name)}` : "";
  let infos;
  try {
    infos = await call("PUT", `api/connector-plugins/${encodeURIComponent(config["connector.class"])}/config/validate${query}`, config);
  } catch (error) {
    if (current()) formErrors(errorLines(error));
    return null;
  }
  if (!current()) return null;
  drawForm(infos, config);
  return infos;
}

// Redraws the fields from `infos`, with what the form holds now (typed while it was asked,
// too; `asked` when that does not parse).
function drawForm(infos, asked) {
  let config;
  try {
    config = formConfig();
  } catch {
    config = asked;
  }
  const focused = document.activeElement && document.activeElement.dataset.input;
  const defined = infos.configs.filter((c) => c.definition && !TOP_FIELDS.has(c.definition.name));
  const names = new Set(defined.map((c) => c.definition.name));
  formElement("form-fields").replaceChildren(
    ...fieldGroups(infos, defined, config).map(([group, entries, own]) => fieldGroup(group, entries, config, own)),
  );
  const others = Object.fromEntries(Object.entries(config).filter(([key]) => !names.has(key) && !TOP_FIELDS.has(key)));
  formElement("form-config").value = Object.keys(others).length ? JSON.stringify(others, null, 2) : "";
  formElement("form-other").open = Object.keys(others).length > 0;
  const general = [];
  for (const entry of infos.configs) {
    const key = entry.value.name;
    const list = document.querySelector(`#connector-form [data-errors-of="${CSS.escape(key)}"]`);
    if (list) list.replaceChildren(...entry.value.errors.map((e) => el("li", {}, e)));
    else general.push(...entry.value.errors.map((e) => `${key}: ${e}`));
  }
  formErrors(general);
  formElement("form-checked").textContent = infos.error_count
    ? `${infos.error_count} error(s), shown under their settings: nothing is written until they are fixed.`
    : "Checked: no error.";
  if (page.form.initialOffsets) formElement("form-checked").append(` It starts from the ${page.form.initialOffsets.length} initial offsets pasted.`);
  const refocus = focused && document.querySelector(`#connector-form [data-input="${CSS.escape(focused)}"]`);
  if (refocus) refocus.focus();
}

// The groups of the fields shown, as [group, entries, own]: first the groups of the keys the
// connector defines itself (those without a group in one named after it), then the
// framework's, each in the order the answer lists them.
function fieldGroups(infos, defined, config) {
  const own = new Set(infos.connector_keys || []);
  const connector = `${config["connector.class"].split(/[.:$]/).pop()} settings`;
  const groups = new Map([[connector, []], ...(infos.groups || []).map((g) => [g, []])]);
  const owned = new Set([connector]);
  for (const entry of defined) {
    const name = entry.definition.name;
    if (!entry.value.visible && !entry.value.errors.length && config[name] === undefined) continue;
    const group = entry.definition.group || (own.has(name) ? connector : "More settings");
    if (!groups.has(group)) groups.set(group, []);
    groups.get(group).push(entry);
    if (own.has(name)) owned.add(group);
  }
  const shown = [...groups].filter(([, entries]) => entries.length).map(([group, entries]) => [group, entries, owned.has(group)]);
  return [...shown.filter(([, , mine]) => mine), ...shown.filter(([, , mine]) => !mine)];
}

// A group of fields, open when it holds the connector's own settings, a required setting, a
// set value or an error (or the user opened it).
function fieldGroup(group, entries, config, own) {
  entries.sort((a, b) => a.definition.order - b.definition.order);
  const open = own || page.form.open.has(group) || entries.some((e) => e.definition.required || e.value.errors.length || config[e.definition.name] !== undefined);
  const node = el("details", { class: "group", "data-group": group, "data-own": own, open }, el("summary", {}, group), entries.map((e) => field(e, config)));
  node.addEventListener("toggle", () => (node.open ? page.form.open.add(group) : page.form.open.delete(group)));
  return node;
}

// A required key's mark, the same on every such field (the name and class above them too).
const requiredMark = () => el("span", { class: "required", title: "Required: it has no default" }, "*");

// A key's field, labelled once: its display name, and its key when that differs.
function field(entry, config) {
  const d = entry.definition;
  const id = `field-${d.name}`;
  const label = d.display_name || d.name;
  const value = config[d.name] ?? "";
  const common = { id, "data-input": d.name, onchange: checkForm };
  let input;
  if (d.type === "BOOLEAN") {
    const other = ["", "true", "false"].includes(value) ? null : el("option", {}, value); // kept as written
    input = el("select", common, el("option", { value: "" }, `default (${d.default_value ?? "none"})`), el("option", {}, "true"), el("option", {}, "false"), other);
    input.value = value;
  } else if (value.includes("\n")) {
    input = el("textarea", { ...common, rows: Math.min(8, value.split("\n").length), spellcheck: "false" }); // lines kept
    input.value = value;
  } else {
    const listed = entry.value.recommended_values.length ? `${id}-values` : null;
    input = el("input", {
      ...common,
      type: d.type === "PASSWORD" ? "password" : "text",
      autocomplete: "off",
      placeholder: d.default_value ?? "",
      list: listed,
      required: d.required,
    });
    input.value = value;
  }
  const values = entry.value.recommended_values;
  return el(
    "div",
    { class: "field", "data-field": d.name },
    el("label", { for: id }, label, d.required ? [" ", requiredMark()] : null, label === d.name ? null : [" ", el("code", { class: "muted" }, d.name)]),
    input,
    values.length && d.type !== "BOOLEAN" ? el("datalist", { id: `${id}-values` }, values.map((v) => el("option", { value: v }))) : null,
    el("div", { class: "doc muted" }, d.documentation ? `${d.documentation} ` : null, el("span", { "data-role": "type" }, `(${d.type.toLowerCase()})`)),
    el("ul", { class: "field-errors", "data-errors-of": d.name }),
  );
}

async function submitForm(event) {
  event.preventDefault();
  const submit = formElement("form-submit");
  submit.disabled = true;
  try {
    const infos = await checkForm();
    if (!infos || infos.error_count) return; // shown under the fields: nothing written
    await writeForm(formConfig());
  } finally {
    submit.disabled = false;
  }
}

async function writeForm(config) {
  const editing = page.form.name;
  const name = config.name;
  const initialState = editing ? "RUNNING" : formElement("form-initial-state").value;
  try {
    if (editing) await call("PUT", `api/connectors/${encodeURIComponent(editing)}/config`, config);
    else await call("POST", "api/connectors", { name, config, initial_state: initialState, initial_offsets: page.form.initialOffsets });
  } catch (error) {
    formErrors(errorLines(error));
    return;
  }
  formElement("connector-form").close();
  const saved = editing || name;
  clearBanner("error");
  banner("notice", editing ? `Saved the config of ${saved}; the runtime reconfigures it at its next reconcile.` : `Created ${saved}; the runtime starts it ${initialState.toLowerCase()} at its next reconcile.`, saved);
  page.expanded.add(saved);
  page.watch = { name: saved, action: { done: (c) => c.connector.state === initialState }, until: Date.now() + WATCH_MS };
  refresh();
}

// The lines of an error answer: Kafka Connect's message (one line per invalid setting,
// naming its keys), FastAPI's per-field details, or the status.
function errorLines(error) {
  const body = error.body;
  if (body && typeof body.message === "string") return body.message.split("\n").map((l) => l.trim()).filter(Boolean);
  if (body && Array.isArray(body.detail)) {
    return body.detail.map((d) => `${(d.loc || []).filter((p) => p !== "body").join(".") || "body"}: ${d.msg}`);
  }
  if (body && typeof body.detail === "string") return [`${error.status}: ${body.detail}`];
  return [error.message];
}

const KEYS = /^([A-Za-z0-9_.\-$]+(?:, [A-Za-z0-9_.\-$]+)*): (.+)$/;

// Shows `lines` as a list: Kafka Connect's heading ("... contains the following N error(s):")
// above it, its pointer to the REST validate endpoint below, and each line's keys marked.
function formErrors(lines) {
  const box = formElement("form-errors");
  let items = lines;
  let summary = "";
  let note = "";
  if (items.length > 1 && items[0].endsWith(":")) [summary, ...items] = items;
  if (items.length > 1 && items[items.length - 1].startsWith("You can also find")) note = items.pop();
  formElement("form-error-summary").textContent = summary;
  formElement("form-error-note").textContent = note;
  box.querySelector("ul").replaceChildren(
    ...items.map((line) => {
      const keyed = KEYS.exec(line);
      return keyed
        ? el("li", { "data-keys": keyed[1] }, el("code", {}, keyed[1]), `: ${keyed[2]}`)
        : el("li", {}, line);
    }),
  );
  box.hidden = lines.length === 0;
}

// -- offsets of a STOPPED connector (KIP-875) -------------------------------------------
// A source's offsets change at once; a sink's are staged, and the runtime writes them to
// its consumer group before the connector next starts (the page reaches no Kafka).
function currentOffsets(c) {
  if (c.type !== "sink") return c.source_offsets;
  if (c.staged_offsets && !c.staged_offsets_alter) return c.staged_offsets;
  const at = new Map();
  for (const p of c.sink_progress) {
    if (p.committed_offset !== null) at.set(`${p.topic}\u0000${p.partition}`, { partition: { kafka_topic: p.topic, kafka_partition: p.partition }, offset: { kafka_offset: p.committed_offset } });
  }
  for (const o of c.staged_offsets || []) at.set(`${o.partition.kafka_topic}\u0000${o.partition.kafka_partition}`, o);
  return [...at.values()];
}

function openOffsets(c) {
  page.offsets = c.name;
  formElement("offsets-title").textContent = `Offsets of ${c.name}`;
  formElement("offsets-help").textContent =
    c.type === "sink"
      ? "A sink's offsets are written to its consumer group by the runtime before the connector next starts; partitions left out keep theirs."
      : "A source's offsets change at once; a partition whose offset is null loses it.";
  formElement("offsets-text").value = JSON.stringify(currentOffsets(c), null, 2);
  formElement("offsets-errors").hidden = true;
  formElement("offsets-form").showModal();
}

async function changeOffsets(reset) {
  const name = page.offsets;
  const question = [
    "Reset every offset of ",
    el("b", {}, name),
    "? It forgets how far it got: a source reads its data again from the start, a sink's consumer group goes before it next starts.",
  ];
  if (reset && !(await confirmed(question, "Reset every offset"))) return;
  const path = `api/connectors/${encodeURIComponent(name)}/offsets`;
  const errors = formElement("offsets-errors");
  try {
    let answer;
    if (reset) answer = await call("DELETE", path);
    else {
      let offsets;
      try {
        offsets = JSON.parse(formElement("offsets-text").value);
      } catch (error) {
        throw new Error(`The offsets are not JSON: ${error.message}`);
      }
      answer = await call("PATCH", path, { offsets });
    }
    formElement("offsets-form").close();
    clearBanner("error");
    banner("notice", `${name}: ${answer.message}.`, name);
  } catch (error) {
    errors.textContent = error instanceof ApiError ? errorLines(error).join("\n") : error.message;
    errors.hidden = false;
  }
  refresh();
}

// -- the task-instance tab: the connector the task's rendered `connector_name` names. The UI
// fills in {MAP_INDEX} only for mapped tasks.
async function connectorOfTask(params) {
  const parts = ["dags", params.get("dag_id"), "dagRuns", params.get("run_id"), "taskInstances", params.get("task_id")];
  const mapIndex = params.get("map_index");
  if (/^\d+$/.test(mapIndex)) parts.push(mapIndex);
  const instance = await call("GET", `../api/v2/${parts.map(encodeURIComponent).join("/")}`);
  return (instance.rendered_fields || {}).connector_name || null;
}

async function start() {
  // Opened on its own (an old Airflow's link, a bookmark): a way back to Airflow.
  document.getElementById("to-airflow").hidden = window.top !== window;
  for (const kind of Object.keys(page.banners)) {
    document.querySelector(`[data-dismiss="${kind}"]`).addEventListener("click", () => clearBanner(kind));
  }
  document.getElementById("new-connector").addEventListener("click", () => openForm(null));
  for (const id of ["form-name", "form-class"]) document.querySelector(`label[for="${id}"]`).append(" ", requiredMark());
  document.getElementById("connector-form-body").addEventListener("submit", submitForm);
  document.getElementById("form-cancel").addEventListener("click", () => document.getElementById("connector-form").close());
  document.getElementById("form-class").addEventListener("input", classTyped);
  document.getElementById("form-class").addEventListener("change", checkForm);
  document.getElementById("form-config").addEventListener("change", checkForm);
  document.getElementById("offsets-form-body").addEventListener("submit", (event) => {
    event.preventDefault();
    changeOffsets(false);
  });
  document.getElementById("offsets-reset").addEventListener("click", () => changeOffsets(true));
  document.getElementById("offsets-cancel").addEventListener("click", () => document.getElementById("offsets-form").close());
  const params = new URLSearchParams(openedWith());
  let focus = params.get("connector");
  if (!focus && params.get("task_id")) {
    const task = params.get("task_id");
    try {
      focus = await connectorOfTask(params);
      if (!focus) banner("notice", `Task ${task} names no connector (or has not run yet): every connector is shown.`);
    } catch (error) {
      banner("notice", `Could not read task ${task} (${error.message}): every connector is shown.`);
    }
  }
  if (focus) {
    page.focus = focus;
    document.getElementById("filter-name").value = focus;
    page.expanded.add(focus);
  }
  for (const id of ["filter-name", "filter-state"]) {
    document.getElementById(id).addEventListener("input", () => page.data && render());
  }
  refresh();
}

/** The query the page was opened with: its own, or, in Airflow's plugin view, the enclosing
 * page's (Airflow 3.3.1 gives the view's frame its href alone, without the query of the link
 * that opened the view; 3.3.2 passes it on). */
function openedWith() {
  if (window.location.search || window.parent === window) return window.location.search;
  try {
    return window.parent.location.search;
  } catch {
    return ""; // embedded by a page of another origin
  }
}

start();
