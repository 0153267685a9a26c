// agent-memory console: what an agent remembers, by grain and day, what it learned from outcomes
// (experiences and patterns), and what the tenant published as shared knowledge, read through the
// HTTP API.
//
// Plain ES module, no build step, no third-party code. Every value from the API reaches the page
// through textContent (the `h` helper), never as HTML. The key lives in sessionStorage: it goes
// when the tab closes, and other tabs never see it.

const GRAINS = ["working", "daily", "weekly", "monthly", "quarterly", "yearly"];
// What the search form's sources choice sends; "private" sends nothing (the API's default), so a
// search of memory alone is the request it always was.
const SOURCES = { private: null, shared: ["shared"], both: ["private", "shared"] };
// Between a passage's title and its headings, as the service cites them.
const CITATION_SEPARATOR = " \u203a ";
const MAX_DOCUMENTS = 1000;
const KEY_STORAGE = "agent-memory.console.key";
const DAY_MS = 86400000;
// The memory kinds that carry an experience: a confidence and the evidence it rests on.
const EXPERIENCE_KINDS = ["success", "failure", "insight", "pattern"];
// The most experiences one list shows (the most a search returns).
const MAX_EXPERIENCES = 100;
// An experience's audit trail is read 100 events a page, at most this many pages.
const MAX_HISTORY_PAGES = 5;
// The audit events an experience's confidence history is made of.
const HISTORY_ACTIONS = ["feedback", "pattern_made", "pattern_dropped"];
// Feedback and pattern runs are queued: how often, and how long, the page looks for them done.
const POLL_MS = 500;
const FEEDBACK_POLLS = 30;
const PATTERN_POLLS = 120;
// The feedback an operator can give, as the API names it (`outcome`), and what it does.
const FEEDBACK = {
  confirmed: { label: "Confirm", question: "Confirm this experience?", effect: "It held: confidence rises." },
  refuted: { label: "Refute", question: "Refute this experience?", effect: "It did not hold: confidence falls." },
  applied: {
    label: "Mark applied", question: "Mark this experience as applied?",
    effect: "The agent acted on it: counted, not evidence, so confidence stays.",
  },
};

const state = {
  apiBase: "",
  key: null,
  agents: [],
  agent: null,
  timezone: "UTC",
  timeline: null,
  allowForget: false,
  period: null,
  documents: [],
  document: null,
  experiences: [],
  experience: null,
  settings: null,
  exports: [],
};

// --- small helpers ----------------------------------------------------------------------------

const $ = (selector) => document.querySelector(selector);

/** An element with attributes and children; strings become text nodes (never parsed as HTML). */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") el.className = value;
    else if (name === "dataset") Object.assign(el.dataset, value);
    else if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

class ApiError extends Error {
  constructor(status, body) {
    const error = (body && body.error) || {};
    super(error.message || `HTTP ${status}`);
    this.status = status;
    this.code = error.code || "http_error";
  }
}

async function api(path, { method = "GET", body } = {}) {
  const headers = { Accept: "application/json", Authorization: `Bearer ${state.key}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(state.apiBase + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "omit",
    cache: "no-store",
  });
  const text = await response.text();
  const data = text ? JSON.parse(text) : null;
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

const agentPath = (suffix = "") => `/v1/agents/${encodeURIComponent(state.agent)}${suffix}`;
// The same for an agent captured before an await (the operator may have picked another since).
const pathOf = (agent, suffix = "") => `/v1/agents/${encodeURIComponent(agent)}${suffix}`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function notify(message, kind = "info") {
  const box = $("#notice");
  box.textContent = message;
  box.className = `notice ${kind === "error" ? "error" : ""}`;
  box.hidden = false;
  clearTimeout(notify.timer);
  if (kind !== "error") notify.timer = setTimeout(() => (box.hidden = true), 6000);
}

function explain(error) {
  if (error instanceof ApiError) {
    if (error.status === 401) return "The key was not accepted (401): check it and connect again.";
    if (error.status === 403) return `Not allowed (403): ${error.message}.`;
    return `${error.status} ${error.code}: ${error.message}`;
  }
  return `The API could not be reached: ${error.message}`;
}

function fail(error) {
  notify(explain(error), "error");
}

// --- dates in the agent's timezone --------------------------------------------------------------

function localDay(iso, tz = state.timezone) {
  // en-CA formats as YYYY-MM-DD
  return new Intl.DateTimeFormat("en-CA", { timeZone: tz, year: "numeric", month: "2-digit", day: "2-digit" })
    .format(new Date(iso));
}

function localTime(iso, tz = state.timezone) {
  const parts = new Intl.DateTimeFormat("en-CA", {
    timeZone: tz, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23",
  }).formatToParts(new Date(iso));
  const get = (type) => parts.find((p) => p.type === type)?.value ?? "";
  return `${get("year")}-${get("month")}-${get("day")} ${get("hour")}:${get("minute")}`;
}

const dayNumber = (ymd) => Date.UTC(+ymd.slice(0, 4), +ymd.slice(5, 7) - 1, +ymd.slice(8, 10)) / DAY_MS;
const ymdOf = (n) => new Date(n * DAY_MS).toISOString().slice(0, 10);
const todayLocal = () => localDay(new Date().toISOString());

function fixed(value, digits = 3) {
  return value === null || value === undefined ? "–" : Number(value).toFixed(digits);
}

// --- connect and agents -------------------------------------------------------------------------

async function loadConfig() {
  // Deployed as a static site, config.json names the API; served by the API itself, it is absent.
  try {
    const response = await fetch("config.json", { cache: "no-store" });
    if (response.ok) {
      const config = await response.json();
      if (typeof config.api_url === "string") state.apiBase = config.api_url.replace(/\/+$/, "");
    }
  } catch {
    /* same origin */
  }
}

async function connect(key) {
  state.key = key;
  try {
    const agents = [];
    let cursor = null;
    do {
      const page = await api(`/v1/agents?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      agents.push(...page.items.map((a) => a.agent_id));
      cursor = page.next_cursor;
    } while (cursor && agents.length < 1000);
    sessionStorage.setItem(KEY_STORAGE, key);
    state.agents = agents;
    $("#api-key").value = "";
    $("#api-key").hidden = true;
    $("#connect-button").hidden = true;
    $("#connected").hidden = false;
    $("#disconnect").hidden = false;
    $("#knowledge-link").hidden = false;
    $("#settings-link").hidden = false;
    $("#exports-link").hidden = false;
    renderAgents();
    $("#notice").hidden = true;
    const hash = new URLSearchParams(location.hash.slice(1));
    const wanted = hash.get("agent");
    if (wanted && agents.includes(wanted)) selectAgent(wanted, { experience: hash.get("experience") });
    else if (hash.has("knowledge")) selectKnowledge(hash.get("knowledge") || null);
    else if (hash.has("settings")) selectSettings();
    else if (hash.has("exports")) selectExports();
  } catch (error) {
    state.key = null;
    sessionStorage.removeItem(KEY_STORAGE);
    fail(error);
  }
}

function disconnect() {
  sessionStorage.removeItem(KEY_STORAGE);
  state.key = null;
  state.agent = null;
  state.agents = [];
  $("#api-key").hidden = false;
  $("#connect-button").hidden = false;
  $("#connected").hidden = true;
  $("#disconnect").hidden = true;
  $("#agent-view").hidden = true;
  $("#knowledge-link").hidden = true;
  $("#knowledge-link").setAttribute("aria-current", "false");
  $("#knowledge-view").hidden = true;
  $("#settings-link").hidden = true;
  $("#settings-link").setAttribute("aria-current", "false");
  $("#settings-view").hidden = true;
  state.settings = null;
  leaveExports(true);
  state.documents = [];
  state.document = null;
  state.experiences = [];
  state.experience = null;
  $("#welcome").hidden = false;
  renderAgents();
}

function renderAgents() {
  const filter = $("#agent-filter").value.trim().toLowerCase();
  const list = $("#agent-list");
  list.replaceChildren(
    ...state.agents
      .filter((a) => a.toLowerCase().includes(filter))
      .map((a) =>
        h("li", {}, h("button", {
          type: "button", title: a, "aria-current": a === state.agent ? "true" : "false", dataset: { agent: a },
          onclick: () => selectAgent(a),
        }, a)),
      ),
  );
  $("#agents-empty").hidden = !(state.key && state.agents.length === 0);
}

async function selectAgent(agent, { experience = null } = {}) {
  state.agent = agent;
  state.period = null;
  state.experiences = [];
  state.experience = null;
  history.replaceState(null, "", `#agent=${encodeURIComponent(agent)}`);
  renderAgents();
  $("#welcome").hidden = true;
  $("#knowledge-view").hidden = true;
  $("#knowledge-link").setAttribute("aria-current", "false");
  $("#settings-view").hidden = true;
  $("#settings-link").setAttribute("aria-current", "false");
  leaveExports();
  $("#agent-view").hidden = false;
  $("#agent-title").textContent = agent;
  $("#period").hidden = true;
  $("#results").replaceChildren();
  $("#audit").replaceChildren();
  $("#experiences").replaceChildren();
  $("#experience").hidden = true;
  if (experience) selectTab("experiences", false);
  if (!$("#until").value) {
    const until = todayLocal();
    $("#until").value = until;
    $("#since").value = ymdOf(dayNumber(until) - 27);
  }
  await Promise.all([loadStats(), loadTimeline()]);
  if (currentTab() === "audit") loadAudit();
  if (currentTab() === "experiences") {
    loadExperiences();
    if (experience) openExperience(experience);
  }
}

// --- stats ----------------------------------------------------------------------------------------

async function loadStats() {
  const agent = state.agent;
  try {
    const [stats, searches] = await Promise.all([api(agentPath("/stats")), api(agentPath("/stats/searches?days=30"))]);
    if (agent !== state.agent) return;
    const card = (label, value, { grain, cls = "", date = false, title } = {}) =>
      h("div", { class: `stat ${cls}`, title, dataset: { stat: grain || label } },
        h("div", { class: `value${date ? " date" : ""}` }, value),
        h("div", { class: "label" }, grain ? h("span", { class: `dot ${grain}` }) : null, label));
    $("#stats").replaceChildren(
      ...GRAINS.map((g) => card(g, stats.records[g] ?? 0, { grain: g })),
      card("oldest", stats.oldest ? localTime(stats.oldest) : "–", { date: true }),
      card("newest", stats.newest ? localTime(stats.newest) : "–", { date: true }),
      card("pending writes", stats.pending_writes),
      card("searches, 30 days", searches.searches),
      card("found nothing", searches.zero_hits, {
        cls: searches.zero_hits ? "warn" : "",
        title: "Searches in the last 30 days that returned no memory at all",
      }),
    );
  } catch (error) {
    fail(error);
  }
}

// --- timeline ---------------------------------------------------------------------------------------

async function loadTimeline() {
  const agent = state.agent;
  const since = $("#since").value;
  const until = $("#until").value;
  try {
    const timeline = await api(agentPath(`/timeline?since=${since}&until=${until}`));
    if (agent !== state.agent) return;
    state.timeline = timeline;
    state.timezone = timeline.timezone;
    $("#tz").textContent = `days in ${timeline.timezone}`;
    renderTimeline();
  } catch (error) {
    fail(error);
  }
}

function renderTimeline() {
  const t = state.timeline;
  const first = dayNumber(t.since);
  const days = dayNumber(t.until) - first + 1;
  const grid = h("div", { class: "tl-grid" });
  grid.style.setProperty("--days", String(days));

  grid.append(h("div", { class: "tl-day" }));
  for (let i = 0; i < days; i++) {
    const ymd = ymdOf(first + i);
    const d = new Date((first + i) * DAY_MS);
    const isFirst = i === 0 || ymd.endsWith("-01");
    const label = isFirst ? d.toLocaleString("en", { month: "short", day: "numeric", timeZone: "UTC" }) : ymd.slice(8);
    const weekend = d.getUTCDay() === 0 || d.getUTCDay() === 6;
    grid.append(h("div", { class: `tl-day${isFirst ? " month" : ""}${weekend ? " weekend" : ""}`, title: ymd }, label));
  }

  t.lanes.forEach((lane, row) => {
    const label = h("div", { class: "tl-lane-label" }, h("span", { class: `dot ${lane.grain}` }), lane.grain);
    label.style.gridRow = String(row + 2);
    const track = h("div", { class: "tl-track" });
    track.style.gridRow = String(row + 2);
    grid.append(label, track);
    if (lane.grain === "working") {
      const max = Math.max(1, ...lane.periods.map((p) => p.records));
      for (const p of lane.periods) {
        const i = dayNumber(p.time_key) - first;
        const alpha = 0.35 + 0.65 * (p.records / max);
        const cell = h("button", {
          type: "button",
          class: `tl-cell working${isSelected("daily", p.time_key) ? " selected" : ""}`,
          title: `${p.time_key}: ${p.records} working ${p.records === 1 ? "memory" : "memories"}`,
          dataset: { grain: "working", key: p.time_key },
          onclick: () => openPeriod("daily", p.time_key),
        }, String(p.records));
        cell.style.gridRow = String(row + 2);
        cell.style.gridColumn = String(i + 2);
        cell.style.background = `rgba(47, 111, 222, ${alpha.toFixed(2)})`;
        grid.append(cell);
      }
    } else {
      for (const p of lane.periods) {
        const start = Math.max(0, dayNumber(localDay(p.start)) - first);
        const end = Math.min(days, dayNumber(localDay(p.end)) - first);
        if (end <= start) continue;
        const bar = h("button", {
          type: "button",
          class: `tl-bar ${lane.grain}${isSelected(lane.grain, p.time_key) ? " selected" : ""}`,
          title: `${lane.grain} ${p.time_key}: folds ${p.records}`,
          dataset: { grain: lane.grain, key: p.time_key },
          onclick: () => openPeriod(lane.grain, p.time_key),
        }, lane.grain === "daily" ? String(p.records) : `${p.time_key} · ${p.records}`);
        bar.style.gridRow = String(row + 2);
        bar.style.gridColumn = `${start + 2} / ${end + 2}`;
        grid.append(bar);
      }
    }
  });
  const legend = h("p", { class: "tl-legend" },
    "Working: memories per local day. Summaries: the period each covers, and how many children it folded. ",
    "Click a day or a summary to open it.");
  $("#timeline").replaceChildren(grid, legend);
}

const isSelected = (grain, key) => state.period && state.period.grain === grain && state.period.time_key === key;

// --- one period -------------------------------------------------------------------------------------

async function openPeriod(grain, key) {
  const agent = state.agent;
  try {
    const period = await api(agentPath(`/periods/${grain}/${encodeURIComponent(key)}`));
    if (agent !== state.agent) return;
    state.period = period;
    selectTab("timeline");
    renderPeriod();
    if (state.timeline) renderTimeline();
    $("#period").scrollIntoView({ behavior: "smooth", block: "nearest" });
  } catch (error) {
    fail(error);
  }
}

function chip(grain, text = grain) {
  return h("span", { class: `chip ${grain}` }, text);
}

function forgetButton(record) {
  return h("button", {
    type: "button", class: "danger small-btn forget", hidden: !state.allowForget, dataset: { forget: record.id },
    onclick: () => confirmForget(record),
  }, "Forget");
}

/** "no longer holds since <day>" for a memory a newer one superseded (null while it holds). */
function supersededNote(record) {
  if (record.current !== false || !record.superseded_by) return null;
  const since = record.valid_to ? ` since ${localDay(record.valid_to)}` : "";
  return h("span", { class: "chip superseded", dataset: { superseded: record.superseded_by },
    title: `replaced by ${record.superseded_by}` }, `no longer holds${since}`);
}

function recordRow(record, { open } = {}) {
  const when = record.time_key || localTime(record.occurred_at);
  return h("li", { class: "record", dataset: { id: record.id } },
    h("div", { class: "when" }, when),
    h("div", {},
      h("div", { class: "text" }, record.content),
      h("div", { class: "sub" },
        h("span", { class: "mono" }, record.id),
        h("span", {}, `importance ${fixed(record.importance, 2)}`),
        h("span", {}, record.kind),
        supersededNote(record),
        record.tags && record.tags.length ? h("span", {}, `#${record.tags.join(" #")}`) : null,
        record.access_count ? h("span", {}, `recalled ${record.access_count}×`) : null)),
    h("div", { class: "actions" },
      open ? h("button", { type: "button", class: "link", onclick: open }, "Open") : null,
      forgetButton(record)));
}

function renderPeriod() {
  const p = state.period;
  const panel = $("#period");
  const s = p.summary;
  const span = `${localDay(p.start)} → ${localDay(new Date(new Date(p.end).getTime() - 1).toISOString())}`;
  const head = h("div", { class: "panel-head" },
    chip(p.grain), h("h2", {}, p.time_key), h("span", { class: "muted small" }, span),
    h("span", { class: "spacer" }),
    p.parent ? h("button", {
      type: "button", class: "link", dataset: { parent: p.parent.time_key },
      onclick: () => openPeriod(p.parent.grain, p.parent.time_key),
    }, `Folded into ${p.parent.grain} ${p.parent.time_key} ↑`) : null,
    h("button", { type: "button", class: "ghost small-btn", onclick: () => { state.period = null; panel.hidden = true; renderTimeline(); } }, "Close"));

  const body = [];
  if (s) {
    const m = s.metadata || {};
    body.push(
      h("h3", {}, `${p.grain} summary`),
      h("pre", { class: "summary-text", dataset: { summary: s.id } }, s.content),
      h("div", { class: "meta" },
        h("span", {}, "id ", h("b", { class: "mono" }, s.id)),
        h("span", {}, "folded ", h("b", {}, String(m.children_count ?? s.source_ids.length)), ` ${p.child_grain}`),
        m.summarizer_model_id ? h("span", {}, "by ", h("b", {}, m.summarizer_model_id)) : null,
        m.prompt_version ? h("span", {}, "prompt ", h("b", {}, m.prompt_version)) : null,
        h("span", {}, "made ", h("b", {}, localTime(s.created_at))),
        s.updated_at !== s.created_at ? h("span", {}, "re-made ", h("b", {}, localTime(s.updated_at))) : null,
        h("span", {}, "recalled ", h("b", {}, `${s.access_count}×`)),
        h("span", { class: "actions" }, forgetButton(s))),
    );
  } else {
    body.push(h("p", { class: "muted" },
      p.grain === "daily" ? "No daily summary of this day (yet): these are its working memories." : `No ${p.grain} summary of this period (yet).`));
  }

  const made = new Set(s ? s.source_ids : []);
  const open = (child) => child.grain === "working" ? null : () => openPeriod(child.grain, child.time_key);
  body.push(h("h3", { class: "section-title" },
    s ? `Made from ${p.children_total} ${p.child_grain}` : `${p.children_total} ${p.child_grain}`,
    p.children.length < p.children_total ? ` (first ${p.children.length} shown)` : ""));
  if (p.children.length) {
    body.push(h("ul", { class: "records", dataset: { children: p.child_grain } },
      p.children.map((c) => {
        const row = recordRow(c, { open: open(c) });
        if (s && !made.has(c.id)) row.querySelector(".sub").append(chip("daily", "not in the summary yet"));
        return row;
      })));
  } else {
    body.push(h("p", { class: "muted small" }, "Nothing live in this period."));
  }
  if (p.missing_sources.length) {
    body.push(
      h("h3", { class: "section-title" }, `${p.missing_sources.length} source(s) gone since the summary was made`),
      h("ul", { class: "records" }, p.missing_sources.map((id) =>
        h("li", { class: "record gone", dataset: { id } },
          h("div", { class: "when" }, chip("gone", "gone")),
          h("div", { class: "text mono" }, id),
          h("div", { class: "actions" }, h("button", { type: "button", class: "link", onclick: () => showAudit(id) }, "Why?"))))),
    );
  }
  panel.replaceChildren(head, ...body);
  panel.hidden = false;
}

// --- search -------------------------------------------------------------------------------------------

async function runSearch(event) {
  event.preventDefault();
  const query = $("#query").value.trim();
  const body = { grain: $("#search-grain").value, max_results: 20 };
  if (query) body.query = query;
  const sources = SOURCES[$("#search-sources").value];
  if (sources) body.sources = sources;
  const days = $("#search-days").value;
  if (days) body.max_days_ago = Number(days);
  try {
    const response = await api(agentPath("/memories/search"), { method: "POST", body });
    renderResults(response.results, Boolean(query), sources);
    loadStats();
  } catch (error) {
    fail(error);
  }
}

function meter(value, extra = "") {
  const bar = h("span");
  bar.style.width = `${Math.max(0, Math.min(1, value ?? 0)) * 100}%`;
  return h("span", { class: extra ? `meter ${extra}` : "meter" }, bar);
}

/** ``ADR-12 › Consequences``: a shared passage's document title and the headings above it. */
const citation = (doc) => [doc.title, ...(doc.heading_path || [])].join(CITATION_SEPARATOR);

function sourceTag(source) {
  return h("span", { class: `chip source ${source}`, dataset: { sourceTag: source } }, source);
}

function memoryCells(r) {
  const openIt = r.grain === "working" ? () => openPeriod("daily", localDay(r.occurred_at)) : () => openPeriod(r.grain, r.time_key);
  return [
    h("td", {}, sourceTag("private"), " ", chip(r.grain, r.time_key ? `${r.grain} ${r.time_key}` : r.grain)),
    h("td", {},
      h("div", { class: "text" }, r.content),
      h("div", { class: "muted small" }, h("span", { class: "mono" }, r.id), ` · ${localTime(r.occurred_at)} `,
        supersededNote(r)),
      (r.also_in || []).length
        ? h("div", { class: "muted small", dataset: { alsoIn: "true" } },
            "also in ", ...r.also_in.map((a) => chip(a.grain, `${a.grain} ${a.period || a.id}`)))
        : null),
    h("td", { class: "num" },
      h("button", { type: "button", class: "link", onclick: openIt }, r.grain === "working" ? "Open day" : "Open"), " ",
      forgetButton(r)),
  ];
}

function passageCells(r) {
  const d = r.document || { doc_id: "?", title: "?", version: "?", heading_path: [] };
  return [
    h("td", {}, sourceTag("shared")),
    h("td", {},
      h("div", { class: "text" }, r.content),
      h("div", { class: "citation small", dataset: { citation: d.doc_id } },
        "per ", h("b", {}, citation(d)), ` · version ${d.version}`),
      h("div", { class: "muted small" },
        h("span", { class: "mono" }, d.doc_id),
        d.source_uri ? ` · ${d.source_uri}` : null,
        d.start !== undefined ? ` · characters ${d.start}–${d.end}` : null)),
    h("td", { class: "num" },
      h("button", { type: "button", class: "link", onclick: () => selectKnowledge(d.doc_id) }, "Open document")),
  ];
}

function renderResults(results, ranked, sources = null) {
  if (!results.length) {
    $("#results").replaceChildren(h("div", { class: "empty-state", dataset: { zeroHit: "true" } },
      "Nothing found. This search counts as a zero-hit search in the stats above."));
    return;
  }
  const rows = results.map((r, i) => {
    const shared = r.source_tag === "shared";
    return h("tr", { dataset: { id: r.id, source: shared ? "shared" : "private" } },
      h("td", { class: "num" }, String(i + 1)),
      h("td", { class: "num" }, h("span", { class: "score" }, fixed(r.score)), meter(r.score)),
      h("td", { class: "num", dataset: { col: "similarity" } }, fixed(r.similarity), meter(r.similarity)),
      h("td", { class: "num", dataset: { col: "recency" } }, fixed(r.recency), meter(r.recency)),
      h("td", { class: "num", dataset: { col: "importance" } }, fixed(r.importance, 2), meter(r.importance)),
      ...(shared ? passageCells(r) : memoryCells(r)));
  });
  const searched = sources && sources.includes("shared")
    ? (sources.includes("private") ? " from memory and shared knowledge" : " from shared knowledge")
    : "";
  $("#results").replaceChildren(
    h("p", { class: "muted small" }, ranked ? `${results.length} results${searched}, best first.` : `${results.length} newest memories (no query: not ranked).`),
    h("table", { class: "results" },
      h("thead", {}, h("tr", {}, ["#", "score", "similarity", "recency", "importance", "source", "memory or passage", ""].map((c) => h("th", {}, c)))),
      h("tbody", {}, rows)));
}

// --- forget -----------------------------------------------------------------------------------------

function confirmForget(record) {
  const dialog = $("#confirm");
  $("#confirm-text").textContent = record.content;
  dialog.returnValue = "";
  dialog.onclose = async () => {
    if (dialog.returnValue !== "forget") return;
    try {
      const result = await api(agentPath(`/memories/${encodeURIComponent(record.id)}`), { method: "DELETE" });
      const stale = result.stale_summaries.length;
      notify(`Forgotten ${record.id}.${stale ? ` ${stale} summar${stale === 1 ? "y is" : "ies are"} hidden and re-made without it.` : ""}`);
      for (const row of document.querySelectorAll(`[data-id="${CSS.escape(record.id)}"]`)) row.remove();
      state.experiences = state.experiences.filter((r) => r.id !== record.id);
      if (state.experience && state.experience.record.id === record.id) closeExperience();
      const refreshes = [loadStats(), loadTimeline()];
      if (state.period) refreshes.push(openPeriod(state.period.grain, state.period.time_key));
      if (currentTab() === "audit") refreshes.push(loadAudit());
      await Promise.all(refreshes);
    } catch (error) {
      fail(error);
    }
  };
  dialog.showModal();
}

function setAllowForget(on) {
  state.allowForget = on;
  const badge = $("#mode-badge");
  badge.textContent = on ? "forget enabled" : "read-only";
  badge.className = `badge ${on ? "forget" : "readonly"}`;
  for (const button of document.querySelectorAll("button.forget, button.delete-document")) button.hidden = !on;
}

// --- audit trail ------------------------------------------------------------------------------------

async function loadAudit(recordId = null) {
  const agent = state.agent;
  try {
    const query = recordId ? `?limit=100&record_id=${encodeURIComponent(recordId)}` : "?limit=100";
    const page = await api(agentPath(`/audit${query}`));
    if (agent !== state.agent) return;
    const describe = (action, detail) => {
      if (action === "feedback") return describeFeedback(detail);
      if (action === "pattern_made") return describePattern(detail);
      if (action === "pattern_dropped") return describeDropped(detail);
      const parts = [];
      if (detail.stale_summaries?.length) parts.push(`summaries re-made: ${detail.stale_summaries.join(", ")}`);
      if (detail.because) parts.push(`because ${detail.because} was forgotten`);
      if (detail.dropped?.length) parts.push(`dropped ${detail.dropped.join(", ")}`);
      if (detail.stale_since) parts.push(`hidden since ${localTime(detail.stale_since)}`);
      const known = ["stale_summaries", "because", "dropped", "stale_since"];
      const rest = Object.fromEntries(Object.entries(detail).filter(([k]) => !known.includes(k)));
      if (Object.keys(rest).length) parts.push(JSON.stringify(rest));
      return parts.join("; ");
    };
    const title = h("p", { class: "muted small" },
      recordId ? `The audit trail of ${recordId}. `
        : "Every forget and erasure, the summaries they made stale and re-made, feedback on experiences and the patterns recognised, newest first. ",
      recordId ? h("button", { type: "button", class: "link", onclick: () => loadAudit() }, "Show all") : null);
    if (!page.items.length) {
      $("#audit").replaceChildren(title, h("div", { class: "empty-state" }, "Nothing has been forgotten."));
      return;
    }
    $("#audit").replaceChildren(title, h("table", { class: "audit" },
      h("thead", {}, h("tr", {}, ["when", "action", "record", "by", "detail"].map((c) => h("th", {}, c)))),
      h("tbody", {}, page.items.map((e) => h("tr", { dataset: { record: e.record_id, action: e.action } },
        h("td", { class: "num" }, localTime(e.at)),
        h("td", {}, h("span", { class: `action ${e.action}` }, e.action)),
        h("td", { class: "mono" }, e.action === "feedback" || e.action === "pattern_made"
          ? h("button", { type: "button", class: "link mono", onclick: () => showExperience(e.record_id) }, e.record_id)
          : e.record_id),
        h("td", { class: "mono" }, e.actor),
        h("td", { class: "small" }, describe(e.action, e.detail || {})))))));
  } catch (error) {
    fail(error);
  }
}

function showAudit(recordId) {
  selectTab("audit", false);
  loadAudit(recordId);
}

// --- experiences ----------------------------------------------------------------------------------

function kindChip(kind) {
  return h("span", { class: `chip kind ${kind}`, dataset: { kind } }, kind);
}

/** A confidence as the page shows it everywhere: two decimals (the exact value on hover). */
function confidence(value) {
  return h("span", { class: "confidence", title: value === null || value === undefined ? null : String(value) },
    fixed(value, 2));
}

/** What one more feedback of ``outcome`` makes the confidence (the rule in experience/rules/confidence.py). */
function posterior(x, outcome) {
  const k = x.confirmations + (outcome === "confirmed" ? 1 : 0);
  const r = x.refutations + (outcome === "refuted" ? 1 : 0);
  return (x.prior * x.prior_weight + k) / (x.prior_weight + k + r);
}

const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function describeFeedback(d) {
  const note = d.note ? ` (${d.note})` : "";
  return `${d.outcome}${note}: confidence ${fixed(d.confidence_before, 2)} → ${fixed(d.confidence, 2)}; ` +
    `confirmed ${d.confirmations}, refuted ${d.refutations}, applied ${d.applications}`;
}

function describePattern(d) {
  return `recognised from ${plural(d.member_count ?? (d.members || []).length, "member")} over ` +
    `${plural(d.runs ?? 0, "run")}; prior ${fixed(d.prior, 2)}`;
}

function describeDropped(d) {
  return `${plural(d.members_left ?? 0, "member")} left, ${d.min_members ?? "?"} needed: no longer a pattern`;
}

async function loadExperiences() {
  const agent = state.agent;
  const kind = $("#experience-kind").value;
  const min = $("#experience-min").value;
  // No query: the newest first, not ranked.
  const body = { kinds: kind ? [kind] : EXPERIENCE_KINDS, max_results: MAX_EXPERIENCES };
  if (min !== "") body.min_confidence = Number(min);
  try {
    const response = await api(pathOf(agent, "/memories/search"), { method: "POST", body });
    if (agent !== state.agent) return;
    state.experiences = response.results;
    renderExperiences({ kind, min });
    loadStats(); // the list is a search, and counts as one
  } catch (error) {
    fail(error);
  }
}

function experienceRow(r) {
  const x = r.experience;
  const pattern = r.kind === "pattern";
  const count = (field) => (x ? String(x[field]) : "–");
  const current = state.experience && state.experience.record.id === r.id;
  return h("tr", { dataset: { id: r.id, kind: r.kind }, "aria-current": current ? "true" : "false" },
    h("td", {}, kindChip(r.kind)),
    h("td", {},
      h("div", { class: "text" }, r.content),
      x && x.context ? h("div", { class: "small field", dataset: { field: "context" } }, h("span", { class: "muted" }, "context "), x.context) : null,
      x && x.outcome ? h("div", { class: "small field", dataset: { field: "outcome" } }, h("span", { class: "muted" }, "outcome "), x.outcome) : null,
      h("div", { class: "muted small" },
        h("span", { class: "mono" }, r.id),
        x && x.run_id ? ` · run ${x.run_id}` : null,
        ` · ${localTime(r.occurred_at)}`)),
    h("td", { class: "num", dataset: { col: "confidence" } }, confidence(x ? x.confidence : null), meter(x ? x.confidence : 0)),
    h("td", { class: "num", dataset: { col: "confirmations" } }, count("confirmations")),
    h("td", { class: "num", dataset: { col: "refutations" } }, count("refutations")),
    h("td", { class: "num", dataset: { col: "applications" } }, count("applications")),
    h("td", { class: "num", dataset: { col: "members" } }, pattern ? count("members") : "–"),
    h("td", { class: "num", dataset: { col: "runs" } }, pattern ? count("runs") : "–"),
    h("td", { class: "num" },
      h("button", { type: "button", class: "link", title: `Open ${r.id}`, onclick: () => openExperience(r.id) }, "Open")));
}

function renderExperiences(filter) {
  const list = state.experiences;
  const filtered = Boolean(filter.kind) || filter.min !== "";
  if (!list.length) {
    $("#experiences").replaceChildren(h("div", { class: "empty-state", dataset: { noExperiences: "true" } },
      filtered
        ? "No experience matches the filter."
        : "No experiences yet: memories of kind success, failure, insight or pattern appear here."));
    return;
  }
  const patterns = list.filter((r) => r.kind === "pattern").length;
  const which = [
    filter.kind ? `of kind ${filter.kind}` : null,
    filter.min !== "" ? `at least ${fixed(filter.min, 2)} sure` : null,
  ].filter(Boolean).join(", ");
  const capped = list.length >= MAX_EXPERIENCES ? ` The newest ${MAX_EXPERIENCES}: narrow by kind or confidence to see older ones.` : "";
  $("#experiences").replaceChildren(
    h("p", { class: "muted small", dataset: { experiencesCount: String(list.length) } },
      `${plural(list.length, "experience")}${which ? ` ${which}` : ""}`,
      patterns && filter.kind !== "pattern" ? `, ${plural(patterns, "pattern")} among them` : "",
      `, newest first.${capped}`),
    h("table", { class: "results experiences" },
      h("thead", {}, h("tr", {}, ["kind", "experience", "confidence", "confirmed", "refuted", "applied", "members", "runs", ""]
        .map((c) => h("th", {}, c)))),
      h("tbody", {}, list.map(experienceRow))));
}

/** Every event of a record's audit trail (newest first), up to `MAX_HISTORY_PAGES` pages. */
async function auditOf(agent, recordId) {
  const events = [];
  let cursor = null;
  let pages = 0;
  do {
    const query = `?limit=100&record_id=${encodeURIComponent(recordId)}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    const page = await api(pathOf(agent, `/audit${query}`));
    events.push(...page.items);
    cursor = page.next_cursor;
    pages += 1;
  } while (cursor && pages < MAX_HISTORY_PAGES);
  return { events, more: Boolean(cursor) };
}

/** The experience from the audit trail (its feedback and pattern events) or any page's link to it. */
function showExperience(id) {
  selectTab("experiences", false);
  if (!state.experiences.length) loadExperiences();
  openExperience(id);
}

async function openExperience(id, { from = null, scroll = true } = {}) {
  const agent = state.agent;
  try {
    const [record, trail] = await Promise.all([api(pathOf(agent, `/memories/${encodeURIComponent(id)}`)), auditOf(agent, id)]);
    if (agent !== state.agent) return;
    state.experience = { record, events: trail.events, more: trail.more, from };
    listed(record);
    history.replaceState(null, "", `#agent=${encodeURIComponent(agent)}&experience=${encodeURIComponent(id)}`);
    renderExperience();
    for (const row of document.querySelectorAll("#experiences tr[data-id]")) {
      row.setAttribute("aria-current", String(row.dataset.id === id));
    }
    if (scroll) $("#experience").scrollIntoView({ behavior: "smooth", block: "nearest" });
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      notify(`${id} is no longer stored: forgotten, expired, or removed by retention.`, "error");
    } else {
      fail(error);
    }
  }
}

/** Bring the listed row of ``record`` up to date (after feedback), without searching again. */
function listed(record) {
  const i = state.experiences.findIndex((r) => r.id === record.id);
  if (i < 0) return;
  const r = { ...state.experiences[i], content: record.content, experience: record.experience };
  state.experiences[i] = r;
  const row = document.querySelector(`#experiences tr[data-id="${CSS.escape(record.id)}"]`);
  if (row) row.replaceWith(experienceRow(r));
}

function closeExperience() {
  state.experience = null;
  $("#experience").hidden = true;
  for (const row of document.querySelectorAll("#experiences tr[aria-current='true']")) row.setAttribute("aria-current", "false");
  if (state.agent) history.replaceState(null, "", `#agent=${encodeURIComponent(state.agent)}`);
}

function historyRow(e, first) {
  const d = e.detail || {};
  const data = d.outcome ? { action: e.action, outcome: d.outcome } : { action: e.action };
  const cells = (event, note, value, evidence) => h("tr", { dataset: data },
    h("td", { class: "num" }, localTime(e.at)),
    h("td", {}, event),
    h("td", { class: "small", dataset: { col: "note" } }, note),
    h("td", { class: "num", dataset: { col: "confidence" } }, value),
    h("td", { class: "num", dataset: { col: "evidence" } }, evidence),
    h("td", { class: "mono" }, e.actor));
  if (e.action === "feedback") {
    return cells(h("span", { class: `action ${d.outcome}` }, d.outcome), d.note || "–",
      [confidence(d.confidence_before), " → ", h("b", {}, confidence(d.confidence))],
      `${d.confirmations} / ${d.refutations} / ${d.applications}`);
  }
  if (e.action === "pattern_made") {
    return cells(h("span", { class: "action pattern_made" }, first ? "recognised" : "refreshed"),
      `from ${plural(d.member_count ?? (d.members || []).length, "member")} over ${plural(d.runs ?? 0, "run")}`,
      ["prior ", confidence(d.prior)], "–");
  }
  return cells(h("span", { class: "action pattern_dropped" }, "dropped"), describeDropped(d), "–", "–");
}

function renderExperience() {
  const { record: r, events, more, from } = state.experience;
  const x = r.experience;
  const pattern = r.kind === "pattern";
  const panel = $("#experience");
  const head = h("div", { class: "panel-head" },
    kindChip(r.kind), h("h2", {}, pattern ? "Pattern" : "Experience"), h("span", { class: "mono small" }, r.id),
    h("span", { class: "spacer" }),
    from ? h("button", {
      type: "button", class: "link", dataset: { pattern: from }, onclick: () => openExperience(from),
    }, `Member of pattern ${from} ↑`) : null,
    forgetButton(r),
    h("button", { type: "button", class: "ghost small-btn", onclick: closeExperience }, "Close"));
  const body = [h("div", { class: "text experience-content" }, r.content)];
  if (!x) {
    body.push(h("p", { class: "muted" }, `A ${r.kind} memory, not an experience: it has no confidence.`));
  } else {
    body.push(
      h("div", { class: "confidence-line", dataset: { confidence: String(x.confidence) } },
        h("span", { class: "confidence-value" }, confidence(x.confidence)),
        meter(x.confidence, "wide"),
        h("span", { class: "muted small" },
          `confidence; ${pattern ? "recognised" : "written"} at ${fixed(x.prior, 2)}, worth ${plural(x.prior_weight, "observation")}`),
        h("span", { class: "spacer" }),
        h("span", { class: "feedback-actions", role: "group", "aria-label": "Feedback" },
          Object.entries(FEEDBACK).map(([outcome, f]) => h("button", {
            type: "button", class: `small-btn feedback ${outcome === "refuted" ? "ghost danger-ghost" : outcome === "applied" ? "ghost" : ""}`,
            title: f.effect, dataset: { feedback: outcome }, onclick: () => confirmFeedback(r, outcome),
          }, f.label)))),
      h("div", { class: "meta" },
        h("span", {}, "confirmed ", h("b", { dataset: { count: "confirmations" } }, String(x.confirmations))),
        h("span", {}, "refuted ", h("b", { dataset: { count: "refutations" } }, String(x.refutations))),
        h("span", {}, "applied ", h("b", { dataset: { count: "applications" } }, String(x.applications))),
        pattern ? h("span", {}, "members ", h("b", { dataset: { count: "members" } }, String(x.members))) : null,
        pattern ? h("span", {}, "runs ", h("b", { dataset: { count: "runs" } }, String(x.runs))) : null,
        x.run_id ? h("span", {}, "run ", h("b", { class: "mono" }, x.run_id)) : null,
        h("span", {}, "occurred ", h("b", {}, localTime(r.occurred_at))),
        r.updated_at !== r.created_at ? h("span", {}, "updated ", h("b", {}, localTime(r.updated_at))) : null,
        h("span", {}, "recalled ", h("b", {}, `${r.access_count}×`))));
    if (x.context) body.push(h("h3", { class: "section-title" }, "Context"), h("p", { class: "experience-text", dataset: { field: "context" } }, x.context));
    if (x.outcome) body.push(h("h3", { class: "section-title" }, "Outcome"), h("p", { class: "experience-text", dataset: { field: "outcome" } }, x.outcome));
  }

  if (pattern) {
    const members = r.source_ids || [];
    const known = new Map(state.experiences.map((e) => [e.id, e]));
    body.push(h("h3", { class: "section-title" }, `Recognised from ${plural(members.length, "member")}`,
      x ? ` over ${plural(x.runs, "run")}` : ""));
    body.push(members.length
      ? h("ol", { class: "records members", dataset: { members: r.id } }, members.map((id, i) => {
          const member = known.get(id);
          return h("li", { class: "record", dataset: { member: id } },
            h("div", { class: "when" }, `#${i + 1}`),
            h("div", {},
              h("button", { type: "button", class: "link mono", onclick: () => openExperience(id, { from: r.id }) }, id),
              member ? h("div", { class: "text small" }, member.content) : null,
              member && member.experience ? h("div", { class: "sub" },
                kindChip(member.kind),
                h("span", {}, `confidence ${fixed(member.experience.confidence, 2)}`),
                member.experience.run_id ? h("span", {}, `run ${member.experience.run_id}`) : null) : null),
            h("div", {}));
        }))
      : h("p", { class: "muted small" }, "No members listed: a pattern the agent wrote itself."));
  }

  const rows = events.filter((e) => HISTORY_ACTIONS.includes(e.action));
  const oldestMade = rows.map((e) => e.action).lastIndexOf("pattern_made");
  const table = rows.map((e, i) => historyRow(e, i === oldestMade));
  if (x && !pattern) {
    table.push(h("tr", { dataset: { action: "written" } },
      h("td", { class: "num" }, localTime(r.created_at)),
      h("td", {}, h("span", { class: "action written" }, "written")),
      h("td", { class: "small", dataset: { col: "note" } }, `the confidence the agent stated, worth ${plural(x.prior_weight, "observation")}`),
      h("td", { class: "num", dataset: { col: "confidence" } }, h("b", {}, confidence(x.prior))),
      h("td", { class: "num", dataset: { col: "evidence" } }, "0 / 0 / 0"),
      h("td", { class: "mono" }, "–")));
  }
  const feedbacks = rows.filter((e) => e.action === "feedback").length;
  body.push(
    h("h3", { class: "section-title" }, "Confidence history"),
    h("p", { class: "muted small" },
      feedbacks ? `${plural(feedbacks, "feedback event")}, newest first` : "No feedback yet",
      more ? ` (the newest ${rows.length} events of its audit trail)` : "",
      ". Confirmed / refuted / applied counts after each. ",
      h("button", { type: "button", class: "link", onclick: () => showAudit(r.id) }, "Whole audit trail")),
    table.length
      ? h("table", { class: "audit history", dataset: { history: r.id } },
          h("thead", {}, h("tr", {}, ["when", "event", "note", "confidence", "confirmed / refuted / applied", "by"].map((c) => h("th", {}, c)))),
          h("tbody", {}, table))
      : h("p", { class: "muted small" }, "Nothing in its audit trail."));
  panel.replaceChildren(head, ...body);
  panel.hidden = false;
}

function confirmFeedback(record, outcome) {
  const dialog = $("#confirm-feedback");
  const f = FEEDBACK[outcome];
  const x = record.experience;
  $("#feedback-title").textContent = f.question;
  $("#feedback-text").textContent = record.content;
  $("#feedback-effect").textContent =
    `${f.effect} Confidence ${fixed(x.confidence, 2)} → ${fixed(posterior(x, outcome), 2)}. The audit trail records who did it.`;
  $("#feedback-note").value = "";
  $("#feedback-send").textContent = f.label;
  dialog.returnValue = "";
  dialog.onclose = async () => {
    if (dialog.returnValue !== "send") return;
    const agent = state.agent;
    const body = { outcome };
    const note = $("#feedback-note").value.trim();
    if (note) body.note = note;
    try {
      const sent = await api(pathOf(agent, `/memories/${encodeURIComponent(record.id)}/feedback`), { method: "POST", body });
      notify(`Feedback on ${record.id} queued (${sent.feedback_id}).`);
      const event = await counted(agent, record.id, sent.feedback_id);
      if (agent !== state.agent) return;
      if (!event) {
        notify(`Feedback ${sent.feedback_id} is queued but not counted yet: open ${record.id} again in a moment.`);
        return;
      }
      notify(`Counted: ${record.id} ${describeFeedback(event.detail)}.`);
      if (state.experience && state.experience.record.id === record.id) {
        await openExperience(record.id, { from: state.experience.from, scroll: false });
      } else {
        listed(await api(pathOf(agent, `/memories/${encodeURIComponent(record.id)}`)));
      }
    } catch (error) {
      fail(error);
    }
  };
  dialog.showModal();
}

/** The audit event of feedback ``feedbackId`` once the writer has counted it (null: not yet). */
async function counted(agent, recordId, feedbackId) {
  for (let i = 0; i < FEEDBACK_POLLS; i++) {
    await sleep(POLL_MS);
    if (agent !== state.agent) return null;
    const page = await api(pathOf(agent, `/audit?limit=20&record_id=${encodeURIComponent(recordId)}`));
    const event = page.items.find((e) => e.action === "feedback" && e.detail && e.detail.feedback_id === feedbackId);
    if (event) return event;
  }
  return null;
}

/** True once the agent has no writes (or pattern run) pending; false if that takes too long. */
async function settled(agent, polls) {
  for (let i = 0; i < polls; i++) {
    await sleep(POLL_MS);
    if (agent !== state.agent) return false;
    const stats = await api(pathOf(agent, "/stats"));
    // Read once more after none is pending: one answer can show the last write neither pending
    // nor counted yet.
    if (stats.pending_writes === 0) return (await api(pathOf(agent, "/stats"))).pending_writes === 0;
  }
  return false;
}

function confirmPatterns() {
  const dialog = $("#confirm-patterns");
  const agent = state.agent;
  $("#confirm-patterns-text").textContent = `The experiences of ${agent}`;
  dialog.returnValue = "";
  dialog.onclose = () => {
    if (dialog.returnValue === "run" && agent === state.agent) runPatterns(agent);
  };
  dialog.showModal();
}

async function runPatterns(agent) {
  const button = $("#patterns-run");
  button.disabled = true;
  button.setAttribute("aria-busy", "true");
  try {
    await api("/v1/admin/patterns", { method: "POST", body: { agent_id: agent } });
    notify(`Pattern recognition queued for ${agent}…`);
    const done = await settled(agent, PATTERN_POLLS);
    if (agent !== state.agent) return;
    if (!done) {
      notify(`Pattern recognition for ${agent} is queued but has not run yet: Show the list again in a moment.`);
      return;
    }
    await loadExperiences();
    const kind = $("#experience-kind").value;
    const patterns = state.experiences.filter((r) => r.kind === "pattern").length;
    notify(`Pattern recognition has run for ${agent}${!kind || kind === "pattern" ? `: ${plural(patterns, "pattern")} listed` : ""}.`);
    if (state.experience && state.experience.record.kind === "pattern") {
      await openExperience(state.experience.record.id, { scroll: false });
    }
  } catch (error) {
    fail(error);
  } finally {
    button.disabled = false;
    button.removeAttribute("aria-busy");
  }
}

// --- tenant settings -------------------------------------------------------------------------------

// The kinds a tenant commonly gives its own lifetime; the ranking knobs a tenant may default.
const SETTINGS_KINDS = ["conversation", "fact", "preference", "decision", "task", "event", "error", "note"];
const RANKING_KNOBS = ["lexical_weight", "recency_weight", "importance_weight"];

function selectSettings() {
  state.agent = null;
  state.period = null;
  history.replaceState(null, "", "#settings");
  renderAgents();
  $("#settings-link").setAttribute("aria-current", "true");
  $("#knowledge-link").setAttribute("aria-current", "false");
  $("#welcome").hidden = true;
  $("#agent-view").hidden = true;
  $("#knowledge-view").hidden = true;
  leaveExports();
  $("#settings-view").hidden = false;
  loadSettings();
}

async function loadSettings() {
  try {
    renderSettings(await api("/v1/admin/settings"));
  } catch (error) {
    fail(error);
  }
}

/** A number input's value, or null when it is empty. */
const numberOrNull = (input) => (input.value.trim() === "" ? null : Number(input.value));

function renderSettings(view) {
  state.settings = view;
  const s = view.settings;
  $("#settings-version").textContent = view.version
    ? `version ${view.version}, changed ${localTime(view.updated_at)} by ${view.updated_by}`
    : "the deployment's defaults: never changed";
  $("#settings-retention").replaceChildren(
    ...GRAINS.map((grain) => {
      const plan = view.plan_retention_hours[grain];
      const own = s.retention_hours[grain];
      return h("tr", {},
        h("td", {}, grain),
        h("td", {}, plan === null || plan === undefined ? "forever" : `${plan} h`),
        h("td", {}, h("input", {
          type: "number", min: "1", max: plan ?? null, placeholder: "plan", dataset: { grain },
          value: own === null || own === undefined ? "" : own, "aria-label": `${grain} hours`,
        })),
      );
    }),
  );
  $("#settings-ttl").replaceChildren(
    ...SETTINGS_KINDS.map((kind) => h("label", {}, `${kind} `, h("input", {
      type: "number", min: "1", placeholder: "default", dataset: { kind },
      value: s.ttl_days[kind] === null || s.ttl_days[kind] === undefined ? "" : s.ttl_days[kind],
    }))),
  );
  $("#settings-ranking").replaceChildren(
    ...RANKING_KNOBS.map((knob) => h("label", {}, `${knob.replace("_", " ")} `, h("input", {
      type: "number", min: "0", max: "1", step: "0.05", placeholder: "default", dataset: { knob },
      value: s.ranking[knob] === null || s.ranking[knob] === undefined ? "" : s.ranking[knob],
    }))),
  );
  $("#settings-merge").checked = s.merge_near_duplicates;
  $("#settings-redaction").checked = s.redaction.enabled;
  $("#settings-redaction-engine").value = s.redaction.engine;
  $("#settings-max-working").value = s.max_working_per_agent ?? "";
  $("#settings-embedding-provider").value = s.embedding ? s.embedding.provider : "";
  $("#settings-embedding-model").value = s.embedding ? s.embedding.model : "";
  $("#settings-embedding-endpoint").value = s.embedding ? s.embedding.endpoint ?? "" : "";
  $("#settings-embedding-dimension").value = s.embedding ? s.embedding.dimension ?? "" : "";
  $("#settings-embedding-status").textContent = embeddingStatus(view.embedding);
  $("#settings-summary-provider").value = s.summary ? s.summary.provider : "";
  $("#settings-summary-model").value = s.summary ? s.summary.model : "";
  $("#settings-summary-endpoint").value = s.summary ? s.summary.endpoint ?? "" : "";
  $("#settings-key").value = "";
  $("#settings-key-clear").checked = false;
  const key = view.provider_key;
  $("#settings-key-status").textContent = key
    ? `A key is set: it ends in ${key.last4}, set ${localTime(key.set_at)}.`
    : "No key is set.";
}

/** Which embedding model searches use, and how far a change of it has got. */
function embeddingStatus(progress) {
  const name = (m) => (m ? `${m.provider} ${m.model}${m.dimension ? ` (${m.dimension})` : ""}` : "the deployment's model");
  if (!progress || progress.phase === "steady") return `Searches use ${name(progress && progress.active)}.`;
  const left = progress.remaining === null ? "counting" : `${progress.remaining} left`;
  return `Searches use ${name(progress.active)} while memories are re-embedded with ${name(progress.target)}: ` +
    `${progress.embedded} done, ${left}.`;
}

/** The settings document the form says: every field, as the API takes it. */
function settingsFromForm() {
  const retention = {};
  for (const input of document.querySelectorAll("#settings-retention input")) {
    const hours = numberOrNull(input);
    if (hours !== null) retention[input.dataset.grain] = hours;
  }
  const ttl = {};
  for (const input of document.querySelectorAll("#settings-ttl input")) {
    const days = numberOrNull(input);
    if (days !== null) ttl[input.dataset.kind] = days;
  }
  const ranking = {};
  for (const input of document.querySelectorAll("#settings-ranking input")) {
    ranking[input.dataset.knob] = numberOrNull(input);
  }
  const provider = $("#settings-summary-provider").value;
  const endpoint = $("#settings-summary-endpoint").value.trim();
  const summary = provider
    ? { provider, model: $("#settings-summary-model").value.trim(), ...(endpoint ? { endpoint } : {}) }
    : null;
  const eProvider = $("#settings-embedding-provider").value;
  const eEndpoint = $("#settings-embedding-endpoint").value.trim();
  const eDimension = numberOrNull($("#settings-embedding-dimension"));
  const embedding = eProvider
    ? {
        provider: eProvider,
        model: $("#settings-embedding-model").value.trim(),
        ...(eEndpoint ? { endpoint: eEndpoint } : {}),
        ...(eDimension !== null ? { dimension: eDimension } : {}),
      }
    : null;
  return {
    embedding,
    retention_hours: retention,
    ttl_days: ttl,
    ranking,
    merge_near_duplicates: $("#settings-merge").checked,
    redaction: { enabled: $("#settings-redaction").checked, engine: $("#settings-redaction-engine").value },
    max_working_per_agent: numberOrNull($("#settings-max-working")),
    summary,
  };
}

async function saveSettings(event) {
  event.preventDefault();
  const button = $("#settings-save");
  button.disabled = true;
  const body = { version: state.settings.version, settings: settingsFromForm() };
  const key = $("#settings-key").value;
  if (key) body.provider_key = key;
  if ($("#settings-key-clear").checked) body.clear_provider_key = true;
  try {
    renderSettings(await api("/v1/admin/settings", { method: "PUT", body }));
    notify("Saved: in force within a minute everywhere.");
  } catch (error) {
    if (error instanceof ApiError && error.status === 409) {
      notify("Someone changed the settings since you opened them: they are shown again; make your change once more.", "error");
      await loadSettings();
    } else {
      fail(error);
    }
  } finally {
    $("#settings-key").value = "";
    button.disabled = false;
  }
}

// --- exports -------------------------------------------------------------------------------------------

function selectExports() {
  state.agent = null;
  state.period = null;
  history.replaceState(null, "", "#exports");
  renderAgents();
  $("#exports-link").setAttribute("aria-current", "true");
  $("#knowledge-link").setAttribute("aria-current", "false");
  $("#settings-link").setAttribute("aria-current", "false");
  $("#welcome").hidden = true;
  $("#agent-view").hidden = true;
  $("#knowledge-view").hidden = true;
  $("#settings-view").hidden = true;
  $("#exports-view").hidden = false;
  loadExports();
}

/** Hide the exports page (another page was picked) and stop following its exports. */
function leaveExports(forget = false) {
  $("#exports-view").hidden = true;
  $("#exports-link").setAttribute("aria-current", "false");
  if (forget) {
    $("#exports-link").hidden = true;
    state.exports = [];
  }
  clearTimeout(loadExports.timer);
}

async function loadExports() {
  clearTimeout(loadExports.timer);
  try {
    state.exports = (await api("/v1/admin/exports?limit=50")).items;
    renderExports();
  } catch (error) {
    fail(error);
    return;
  }
  // Follow the exports still running while the page is shown.
  if (!$("#exports-view").hidden && state.exports.some((e) => e.status === "queued" || e.status === "running")) {
    loadExports.timer = setTimeout(loadExports, POLL_MS);
  }
}

async function startExport(event) {
  event.preventDefault();
  const button = $("#export-start");
  const body = { [$("#export-subject").value]: $("#export-id").value.trim() };
  if ($("#export-since").value) body.since = `${$("#export-since").value}T00:00:00Z`;
  if ($("#export-until").value) body.until = `${$("#export-until").value}T23:59:59.999999Z`;
  button.disabled = true;
  try {
    const started = await api("/v1/admin/exports", { method: "POST", body });
    notify(`Export ${started.id} started.`);
    await loadExports();
  } catch (error) {
    fail(error);
  } finally {
    button.disabled = false;
  }
}

function exportProgress(e) {
  const p = e.progress;
  const total = p.estimated_total ?? 0;
  const word = (e.status === "done" ? p.memories : total) === 1 ? "memory" : "memories";
  const counts = `${p.memories.toLocaleString()}${e.status === "done" ? "" : ` of ~${total.toLocaleString()}`} ${word}`;
  const extra = p.summaries || p.withheld_summaries
    ? ` · ${plural(p.summaries, "summary", "summaries")}${p.withheld_summaries ? `, ${p.withheld_summaries} withheld` : ""}`
    : "";
  return h("span", {}, meter((p.percent ?? 0) / 100, "wide"), `${fixed(p.percent ?? 0, 0)}% · ${counts}${extra}`);
}

const size = (bytes) => (bytes < 1e6 ? `${Math.max(1, Math.round(bytes / 1e3))} kB` : `${(bytes / 1e6).toFixed(1)} MB`);

/** Fetch a finished export: its pre-signed URL as a link, or (the local runtime) the download
 * route with the key, handed to the browser as a file. */
async function downloadExport(e, button) {
  if (/^https?:/.test(e.download_url)) {
    window.location.assign(e.download_url);
    return;
  }
  button.disabled = true;
  try {
    const response = await fetch(state.apiBase + e.download_url, {
      headers: { Authorization: `Bearer ${state.key}` }, credentials: "omit", cache: "no-store",
    });
    if (!response.ok) throw new ApiError(response.status, await response.json().catch(() => null));
    const url = URL.createObjectURL(await response.blob());
    const link = h("a", { href: url, download: `${e.id}.jsonl` });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
  } catch (error) {
    fail(error);
  } finally {
    button.disabled = false;
  }
}

function renderExports() {
  if (!state.exports.length) {
    $("#exports").replaceChildren(h("div", { class: "empty-state", dataset: { noExports: "true" } },
      "No exports yet: name an end user or an agent above."));
    return;
  }
  const rows = state.exports.map((e) => {
    const download = e.status === "done" && e.download_url
      ? h("button", { type: "button", class: "small-btn", onclick: (event) => downloadExport(e, event.currentTarget) }, "Download")
      : null;
    return h("tr", { dataset: { export: e.id, status: e.status } },
      h("td", { class: "mono small" }, e.id),
      h("td", {}, e.user_id ? `end user ${e.user_id}` : `agent ${e.agent_id}`),
      h("td", { class: "small" }, e.since || e.until ? `${e.since ? localDay(e.since) : "…"} → ${e.until ? localDay(e.until) : "…"}` : "all time"),
      h("td", { class: `status ${e.status}` }, e.status, e.error ? ` (${e.error})` : ""),
      h("td", { class: "small" }, exportProgress(e)),
      h("td", { class: "num small" }, e.status === "done" ? size(e.progress.bytes) : ""),
      h("td", { class: "small" }, localTime(e.created_at)),
      h("td", { class: "num" }, download));
  });
  $("#exports").replaceChildren(
    h("table", { class: "results exports" },
      h("thead", {}, h("tr", {}, ["id", "of", "window", "status", "progress", "size", "started", ""].map((c) => h("th", {}, c)))),
      h("tbody", {}, rows)));
}

// --- shared knowledge --------------------------------------------------------------------------------

function selectKnowledge(docId = null) {
  state.agent = null;
  state.period = null;
  history.replaceState(null, "", docId ? `#knowledge=${encodeURIComponent(docId)}` : "#knowledge");
  renderAgents();
  $("#knowledge-link").setAttribute("aria-current", "true");
  $("#settings-link").setAttribute("aria-current", "false");
  $("#settings-view").hidden = true;
  leaveExports();
  $("#welcome").hidden = true;
  $("#agent-view").hidden = true;
  $("#knowledge-view").hidden = false;
  if (!docId) {
    state.document = null;
    $("#document").hidden = true;
  }
  loadDocuments();
  if (docId) openDocument(docId);
}

async function loadDocuments() {
  try {
    const documents = [];
    let cursor = null;
    let pending = 0;
    do {
      const page = await api(`/v1/knowledge/documents?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      documents.push(...page.documents);
      pending = page.pending;
      cursor = page.next_cursor;
    } while (cursor && documents.length < MAX_DOCUMENTS);
    state.documents = documents;
    renderDocuments(pending, Boolean(cursor));
  } catch (error) {
    fail(error);
  }
}

function validity(d) {
  if (!d.valid_from && !d.valid_until) return "always";
  return `${d.valid_from || "…"} → ${d.valid_until || "…"}`;
}

function deleteButton(d) {
  return h("button", {
    type: "button", class: "danger small-btn delete-document", hidden: !state.allowForget, dataset: { delete: d.doc_id },
    onclick: () => confirmDelete(d),
  }, "Delete");
}

function tagList(tags) {
  return tags && tags.length ? `#${tags.join(" #")}` : "–";
}

function renderDocuments(pending, more) {
  const count = `${state.documents.length}${more ? "+" : ""} document${state.documents.length === 1 ? "" : "s"}`;
  $("#documents-count").textContent = pending ? `${count} · ${pending} put${pending === 1 ? "" : "s"} still queued` : count;
  if (!state.documents.length) {
    $("#documents").replaceChildren(h("div", { class: "empty-state", dataset: { noDocuments: "true" } },
      pending ? "Nothing stored yet: the documents put are still queued. Refresh in a moment." : "The tenant has published no documents."));
    return;
  }
  const rows = state.documents.map((d) =>
    h("tr", { dataset: { doc: d.doc_id }, "aria-current": state.document && state.document.doc_id === d.doc_id ? "true" : null },
      h("td", { class: "mono" }, h("button", { type: "button", class: "link mono", onclick: () => selectKnowledge(d.doc_id) }, d.doc_id)),
      h("td", { class: "text" }, d.title),
      h("td", { class: "mono" }, d.version),
      h("td", { class: "num", dataset: { col: "passages" } }, String(d.passages)),
      h("td", { class: "num", dataset: { col: "hits" } }, String(d.hits)),
      h("td", { class: "num" }, d.last_hit_at ? localTime(d.last_hit_at) : "never"),
      h("td", { class: "small" }, tagList(d.tags)),
      h("td", { class: "small" }, validity(d)),
      h("td", { class: "num" }, deleteButton(d))));
  const capped = h("p", { class: "muted small", hidden: !more }, `The first ${state.documents.length} documents, by id.`);
  $("#documents").replaceChildren(
    capped,
    h("table", { class: "results documents" },
      h("thead", {}, h("tr", {}, ["id", "title", "version", "passages", "hits", "last hit", "tags", "valid", ""].map((c) => h("th", {}, c)))),
      h("tbody", {}, rows)));
}

async function openDocument(docId) {
  try {
    const path = `/v1/knowledge/documents/${encodeURIComponent(docId)}`;
    const [d, passages] = await Promise.all([api(path), api(`${path}/passages`)]);
    state.document = d;
    renderDocument(d, passages.passages);
    for (const row of document.querySelectorAll("#documents tr[data-doc]")) {
      row.setAttribute("aria-current", String(row.dataset.doc === docId));
    }
    $("#document").scrollIntoView({ behavior: "smooth", block: "nearest" });
  } catch (error) {
    fail(error);
  }
}

function renderDocument(d, passages) {
  const panel = $("#document");
  const head = h("div", { class: "panel-head" },
    chip("shared", "shared"), h("h2", {}, d.title), h("span", { class: "mono small" }, d.doc_id),
    h("span", { class: "spacer" }),
    deleteButton(d),
    h("button", {
      type: "button", class: "ghost small-btn",
      onclick: () => { state.document = null; panel.hidden = true; history.replaceState(null, "", "#knowledge"); },
    }, "Close"));
  const meta = h("div", { class: "meta" },
    h("span", {}, "version ", h("b", { class: "mono" }, d.version)),
    h("span", {}, "format ", h("b", {}, d.format)),
    d.source_uri ? h("span", {}, "source ", h("b", {}, d.source_uri)) : null,
    h("span", {}, "tags ", h("b", {}, tagList(d.tags))),
    h("span", {}, "valid ", h("b", {}, validity(d))),
    h("span", {}, "published ", h("b", {}, localTime(d.created_at))),
    d.updated_at !== d.created_at ? h("span", {}, "updated ", h("b", {}, localTime(d.updated_at))) : null,
    h("span", {}, "hits ", h("b", {}, String(d.hits))),
    h("span", {}, "last hit ", h("b", {}, d.last_hit_at ? localTime(d.last_hit_at) : "never")));
  const list = passages.length
    ? h("ol", { class: "records passages", dataset: { passages: d.doc_id } }, passages.map((p) =>
        h("li", { class: "record", dataset: { passage: p.id } },
          h("div", { class: "when" }, `#${p.ordinal + 1}`),
          h("div", {},
            h("div", { class: "heading-path small" }, citation({ title: d.title, heading_path: p.heading_path })),
            h("div", { class: "text" }, p.text),
            h("div", { class: "sub" },
              h("span", { class: "mono" }, p.id),
              h("span", { dataset: { offsets: `${p.start}-${p.end}` } }, `characters ${p.start}–${p.end}`))),
          h("div", {}))))
    : h("p", { class: "muted small" }, "No passages: the document has no text to search.");
  const whole = h("details", { class: "whole-text", hidden: !d.text },
    h("summary", { class: "small" }, "Whole text"), h("pre", { class: "summary-text" }, d.text || ""));
  panel.replaceChildren(head, meta,
    h("h3", { class: "section-title" }, `${passages.length} passage${passages.length === 1 ? "" : "s"}, as search finds them`),
    list, whole);
  panel.hidden = false;
}

function confirmDelete(d) {
  const dialog = $("#confirm-delete");
  $("#confirm-delete-text").textContent = `${d.title} (${d.doc_id}, version ${d.version})`;
  dialog.returnValue = "";
  dialog.onclose = async () => {
    if (dialog.returnValue !== "delete") return;
    try {
      const result = await api(`/v1/knowledge/documents/${encodeURIComponent(d.doc_id)}`, { method: "DELETE" });
      const n = result.passages_removed;
      notify(`Deleted ${d.doc_id}: ${n} passage${n === 1 ? "" : "s"} gone from search.`);
      if (state.document && state.document.doc_id === d.doc_id) {
        state.document = null;
        $("#document").hidden = true;
        history.replaceState(null, "", "#knowledge");
      }
      await loadDocuments();
    } catch (error) {
      fail(error);
    }
  };
  dialog.showModal();
}

// --- tabs and wiring ------------------------------------------------------------------------------

const currentTab = () => document.querySelector(".tabs [aria-selected='true']")?.dataset.tab ?? "timeline";

function selectTab(tab, load = true) {
  for (const button of document.querySelectorAll(".tabs [role='tab']")) {
    button.setAttribute("aria-selected", String(button.dataset.tab === tab));
  }
  for (const panel of document.querySelectorAll("[data-tab-panel]")) panel.hidden = panel.dataset.tabPanel !== tab;
  if (tab === "audit" && load) loadAudit();
  if (tab === "experiences" && load) loadExperiences();
  if (tab === "search") $("#query").focus();
}

async function main() {
  await loadConfig();
  $("#connect").addEventListener("submit", (event) => {
    event.preventDefault();
    const key = $("#api-key").value.trim();
    if (key) connect(key);
  });
  $("#disconnect").addEventListener("click", disconnect);
  $("#agent-filter").addEventListener("input", renderAgents);
  $("#allow-forget").addEventListener("change", (event) => setAllowForget(event.target.checked));
  $("#range").addEventListener("submit", (event) => {
    event.preventDefault();
    loadTimeline();
  });
  $("#search").addEventListener("submit", runSearch);
  $("#experience-filter").addEventListener("submit", (event) => {
    event.preventDefault();
    loadExperiences();
  });
  $("#patterns-run").addEventListener("click", confirmPatterns);
  $("#knowledge-link").addEventListener("click", () => selectKnowledge());
  $("#documents-refresh").addEventListener("click", loadDocuments);
  $("#settings-link").addEventListener("click", () => selectSettings());
  $("#settings-form").addEventListener("submit", saveSettings);
  $("#exports-link").addEventListener("click", () => selectExports());
  $("#exports-refresh").addEventListener("click", loadExports);
  $("#export-form").addEventListener("submit", startExport);
  for (const button of document.querySelectorAll(".tabs [role='tab']")) {
    button.addEventListener("click", () => selectTab(button.dataset.tab));
  }
  setAllowForget(false);
  const saved = sessionStorage.getItem(KEY_STORAGE);
  if (saved) await connect(saved);
  document.body.dataset.ready = "true";
}

main();
