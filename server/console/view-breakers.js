// Behavioural contracts (live status and the Wilson interval drawn against the ceiling) and circuit
// breakers (mode, trips, the counterfactual trips of the last 90 days on a timeline, and arming,
// where the human types the expected trip count and a basis).
// @ts-check

import { api, problemText, seg } from "./api.js";
import { badge, fields, h, message, renderValue, replace, svg, time } from "./dom.js";

/**
 * @typedef {import("./api.js").Breaker} Breaker
 * @typedef {import("./api.js").Contract} Contract
 * @typedef {import("./api.js").Capabilities} Capabilities
 * @typedef {import("./api.js").ViewContext} ViewContext
 */

const AGENT_ID = /^agt_[0-9a-z]{26}$/;
const DAY_MS = 86_400_000;

/** @type {(v: unknown) => number | null} */
const num = (v) => (typeof v === "number" && Number.isFinite(v) ? v : null);
/** @type {(v: number | null) => string} */
const pct = (v) => (v === null ? "?" : `${(v * 100).toFixed(2)}%`);

/**
 * The interval, wherever a contract carries it: `interval`, `wilson` or flat `lower`/`upper`.
 * @param {Contract} c
 */
function intervalOf(c) {
  const i = c.interval ?? c.wilson ?? c.wilson_interval ?? c;
  return { lower: num(i.lower), upper: num(i.upper) };
}

/**
 * The ceiling's label beside its line, on whichever side has room.
 * @param {number} at
 * @param {number} W
 * @param {number} ceiling
 */
function ceilingLabel(at, W, ceiling) {
  const right = at < W - 120;
  return svg("text", { x: right ? at + 4 : at - 4, y: 10, "text-anchor": right ? "start" : "end" }, `ceiling ${pct(ceiling)}`);
}

/**
 * The Wilson interval as a bar on a rate axis, with the measured rate and the ceiling marked.
 * @param {Contract} c
 */
export function intervalBar(c) {
  const { lower, upper } = intervalOf(c);
  const ceiling = num(c.ceiling);
  const rate = num(c.rate);
  const top = Math.min(1, Math.max(0.01, (upper ?? 0) * 1.25, (ceiling ?? 0) * 1.5));
  const W = 600,
    left = 10,
    width = W - 20;
  /** @type {(v: number) => number} */
  const x = (v) => left + (Math.max(0, Math.min(top, v)) / top) * width;
  const chart = svg(
    "svg",
    {
      class: "chart wilson",
      viewBox: `0 0 ${W} 64`,
      role: "img",
      "aria-label": `95% interval ${pct(lower)} to ${pct(upper)} against the ceiling ${pct(ceiling)}`,
    },
    svg("rect", { class: "track", x: left, y: 14, width, height: 18, rx: 3 }),
    lower !== null && upper !== null
      ? svg("rect", { class: ["interval", c.status], x: x(lower), y: 14, width: Math.max(2, x(upper) - x(lower)), height: 18 })
      : null,
    rate !== null ? svg("circle", { class: "point", cx: x(rate), cy: 23, r: 3.5 }) : null,
    ceiling !== null ? svg("line", { class: "ceiling", x1: x(ceiling), x2: x(ceiling), y1: 6, y2: 40 }) : null,
    ceiling !== null ? ceilingLabel(x(ceiling), W, ceiling) : null,
    svg("text", { x: left, y: 54 }, "0%"),
    svg("text", { x: left + width - 40, y: 54 }, pct(top)),
  );
  return chart;
}

/**
 * The last `days` days with a mark at each trip time.
 * @param {unknown} tripTimes
 * @param {number} days
 */
export function tripTimeline(tripTimes, days, now = Date.now()) {
  const W = 600,
    left = 10,
    width = W - 20;
  const start = now - days * DAY_MS;
  /** @type {(t: number) => number} */
  const x = (t) => left + ((t - start) / (days * DAY_MS)) * width;
  /** @type {string[]} */
  const list = Array.isArray(tripTimes) ? tripTimes : [];
  const times = list.map((t) => Date.parse(t)).filter((t) => Number.isFinite(t));
  return svg(
    "svg",
    { class: "chart timeline", viewBox: `0 0 ${W} 56`, role: "img", "aria-label": `${times.length} trips in the last ${days} days` },
    svg("rect", { class: "track", x: left, y: 14, width, height: 16, rx: 3 }),
    times.filter((t) => t >= start && t <= now).map((t) => svg("line", { class: "trip", x1: x(t), x2: x(t), y1: 10, y2: 34 })),
    svg("text", { x: left, y: 48 }, `${days} days ago`),
    svg("text", { x: left + width - 30, y: 48 }, "now"),
  );
}

/**
 * The agent chooser; the chosen agent's id, or null while none is chosen.
 * @param {HTMLElement} section
 * @param {string} view
 * @param {string[]} args
 * @returns {Promise<string | null>}
 */
async function agentPicker(section, view, args) {
  const select = h("select", { name: "agent_id", "aria-label": "agent" }, h("option", { value: "" }, "choose an agent"));
  /** @type {import("./api.js").AgentList} */
  const { agents } = await api("GET", "/agents?limit=100");
  for (const a of agents) {
    const option = h("option", { value: a.id }, `${a.name} (${a.id})`);
    if (a.id === args[0]) option.selected = true;
    select.append(option);
  }
  select.addEventListener("change", () => {
    location.hash = `#${view}/${encodeURIComponent(select.value)}`;
  });
  section.append(h("form", { class: "inline" }, h("label", {}, "Agent", select)));
  const chosen = args[0];
  return chosen !== undefined && AGENT_ID.test(chosen) ? chosen : null;
}

/**
 * @param {HTMLElement} section
 * @param {string} what
 */
function notServed(section, what) {
  section.append(message("notice", `This server does not serve ${what} yet. The view shows them as soon as it does.`));
}

/**
 * @param {HTMLElement} section
 * @param {ViewContext} ctx
 */
export async function contractsView(section, { caps, args }) {
  if (!caps.served("get", "/agents/{}/contracts")) return notServed(section, "behavioural contracts (GET /v1/agents/{agent_id}/contracts)");
  if (!caps.can("get", "/agents/{}/contracts"))
    return void section.append(message("notice", "Your roles do not include reading contracts."));
  const agentId = await agentPicker(section, "contracts", args);
  if (agentId === null) return;
  /** @type {import("./api.js").ContractList} */
  const answer = await api("GET", `/agents/${seg(agentId)}/contracts`);
  const contracts = answer.contracts ?? [];
  if (contracts.length === 0) section.append(h("p", { class: "muted" }, "This agent has no contract."));
  for (const c of contracts) {
    const { lower, upper } = intervalOf(c);
    section.append(
      h(
        "article",
        { class: "card contract", "data-contract-id": c.id },
        h("h3", {}, h("span", { class: "mono" }, c.id), " ", c.metric, " ≤ ", pct(num(c.ceiling)), " ", badge(c.status)),
        fields([
          ["declared by", c.declared_by ?? null],
          [
            "window",
            c.window_decisions != null
              ? `last ${c.window_decisions} decisions`
              : c.window_hours != null
                ? `last ${c.window_hours} hours`
                : null,
          ],
          ["decisions (n)", c.n ?? null],
          ["rate", pct(num(c.rate))],
          ["95% interval", `${pct(lower)} to ${pct(upper)}`],
        ]),
        intervalBar(c),
      ),
    );
  }
}

/**
 * The arm form. The server arms only when `expecting_trips` equals the counterfactual trips of the
 * window (decision 0700): the form says that count, without filling it in, so the human states it.
 * @param {Breaker} breaker
 * @param {() => Promise<void>} reload
 * @param {number} expected
 * @param {number} days
 */
function armForm(breaker, reload, expected, days) {
  const expecting = h("input", {
    name: "expecting_trips",
    type: "number",
    min: "0",
    step: "1",
    required: true,
    inputmode: "numeric",
    placeholder: Number.isSafeInteger(expected) ? String(expected) : undefined,
    "aria-describedby": `arm-hint-${breaker.id ?? breaker.breaker_id}`,
  });
  const basis = h("input", { name: "basis", required: true, maxlength: "1000", size: "40", placeholder: "why arming is right now" });
  const button = h("button", { type: "submit" }, "Arm");
  const out = h("div", { class: "arm-result" });
  const hint = Number.isSafeInteger(expected)
    ? h(
        "p",
        { class: "hint muted arm-hint", id: `arm-hint-${breaker.id ?? breaker.breaker_id}` },
        "The server expects ",
        h("strong", { class: "expected-trips" }, String(expected)),
        `: the trips this breaker would have made in the last ${days} days (the counterfactual above). Arming with any other count is refused.`,
      )
    : null;
  const form = h(
    "form",
    { class: "inline arm" },
    h("label", {}, `Trips you expect in the last ${days} days`, expecting),
    h("label", {}, "Basis", basis),
    button,
    hint,
    out,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    button.disabled = true;
    try {
      await api("POST", `/breakers/${seg(breaker.id ?? breaker.breaker_id)}/arm`, {
        basis: basis.value.trim(),
        expecting_trips: Number(expecting.value),
      });
      replace(out, message("success", "Armed."));
      await reload();
    } catch (error) {
      button.disabled = false;
      replace(out, message("error", problemText(error)));
    }
  });
  return form;
}

/**
 * The form that takes an armed breaker back to observe.
 * @param {Breaker} breaker
 * @param {() => Promise<void>} reload
 */
function disarmForm(breaker, reload) {
  const reason = h("input", { name: "reason", maxlength: "1000", size: "40", placeholder: "optional" });
  const button = h("button", { type: "submit", class: "secondary" }, "Back to observe");
  const out = h("div", {});
  const form = h("form", { class: "inline disarm" }, h("label", {}, "Reason", reason), button, out);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    button.disabled = true;
    try {
      await api("POST", `/breakers/${seg(breaker.id)}/disarm`, reason.value.trim() === "" ? {} : { reason: reason.value.trim() });
      await reload();
    } catch (error) {
      button.disabled = false;
      replace(out, message("error", problemText(error)));
    }
  });
  return form;
}

/**
 * The breaker's recorded trips.
 * @param {import("./api.js").Trip[]} trips
 */
function tripTable(trips) {
  return h(
    "table",
    { class: "trips" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ["at", "mode", "action", "performed", "declared by", "grants", "decision"].map((t) => h("th", {}, t)),
      ),
    ),
    h(
      "tbody",
      {},
      trips.map((t) =>
        h(
          "tr",
          {},
          h("td", {}, time(t.at)),
          h("td", {}, badge(t.mode)),
          h("td", {}, t.action ?? ""),
          h("td", {}, t.performed === undefined ? "" : t.performed ? "yes" : "no (observe: recorded only)"),
          h("td", {}, t.declared_by ?? ""),
          h("td", {}, renderValue(t.grant_ids ?? [])),
          h("td", { class: "mono" }, t.ledger_id ?? ""),
        ),
      ),
    ),
  );
}

/**
 * A breaker with its counterfactual, history and arm or disarm form, read again after each change.
 * @param {import("./api.js").CounterfactualEntry} entry
 * @param {number} days
 * @param {Capabilities} caps
 */
async function breakerCard(entry, days, caps) {
  const card = h("article", { class: "card breaker", "data-breaker-id": entry.breaker_id });
  const reload = async () => {
    /** @type {Breaker} */
    const b = caps.served("get", "/breakers/{}") ? await api("GET", `/breakers/${seg(entry.breaker_id)}`) : { id: entry.breaker_id };
    const trips = b.trips ?? b.trip_history ?? [];
    replace(
      card,
      h(
        "h3",
        {},
        "Breaker ",
        h("span", { class: "mono" }, entry.breaker_id),
        " ",
        badge(b.mode ?? "unknown"),
        " ",
        b.action ? badge(b.action) : null,
      ),
      fields([
        [
          "contract",
          b.contract
            ? `${b.contract_id} (${b.contract.metric} ≤ ${pct(num(b.contract.ceiling))}, ${b.contract.status})`
            : (b.contract_id ?? null),
        ],
        ["declared by", b.contract?.declared_by ?? b.declared_by ?? null],
        ["created by", b.created_by ?? null],
        ["armed", b.armed_at ? h("span", { class: "armed" }, time(b.armed_at), " by ", b.armed_by ?? "?") : null],
        ["basis", b.basis ?? null],
      ]),
      h("h3", {}, `Counterfactual: ${entry.trips} trip${entry.trips === 1 ? "" : "s"} in the last ${days} days`),
      tripTimeline(entry.trip_times, days),
      h("h3", {}, "Trip history"),
      trips.length === 0 ? h("p", { class: "muted" }, "No trip recorded.") : tripTable(trips),
      b.mode === "observe" && caps.can("post", "/breakers/{}/arm") ? armForm(b, reload, entry.trips, days) : null,
      b.mode === "armed" && caps.can("post", "/breakers/{}/disarm") ? disarmForm(b, reload) : null,
    );
  };
  await reload();
  return card;
}

/**
 * @param {HTMLElement} section
 * @param {ViewContext} ctx
 */
export async function breakersView(section, { caps, args }) {
  if (!caps.served("get", "/agents/{}/breakers/counterfactual"))
    return notServed(section, "circuit breakers (GET /v1/agents/{agent_id}/breakers/counterfactual)");
  if (!caps.can("get", "/agents/{}/breakers/counterfactual"))
    return void section.append(message("notice", "Your roles do not include reading breakers."));
  const agentId = await agentPicker(section, "breakers", args);
  if (agentId === null) return;
  /** @type {import("./api.js").Counterfactual} */
  const cf = await api("GET", `/agents/${seg(agentId)}/breakers/counterfactual`);
  const days = cf.window_days ?? 90;
  if ((cf.breakers ?? []).length === 0) section.append(h("p", { class: "muted" }, "This agent has no breaker."));
  for (const entry of cf.breakers ?? []) section.append(await breakerCard(entry, days, caps));
}
