// Grants: every grant the key may read, filtered by agent, status, family and principal, one page at
// a time behind the server's opaque cursor; each row links to its tree's decision ledger.
// @ts-check

import { api } from "./api.js";
import { badge, h, message, money, time } from "./dom.js";

/**
 * @typedef {import("./api.js").Grant} Grant
 * @typedef {import("./dom.js").Child} Child
 */

const STATUSES = ["", "active", "pending_approval", "revoked", "expired"];
const FILTERS = ["agent_id", "status", "family_id", "principal_id"];
/** @type {Record<string, string>} */
const PLACEHOLDERS = { agent_id: "agt_…", family_id: "fam_…", principal_id: "alice@example.com" };
/** Grants per page in this view; the server allows up to 1,000. */
const PAGE_SIZE = 50;

/**
 * The view's address for a query: filters and cursor travel in the hash, never a key.
 * @param {URLSearchParams} params
 */
function grantsHref(params) {
  const text = params.toString();
  return text === "" ? "#grants" : `#grants/${encodeURIComponent(text)}`;
}

/**
 * A link within the console to `href`, a hash this module built.
 * @param {string} href
 * @param {string} text
 * @param {string} className
 */
function link(href, text, className) {
  const a = h("a", { class: className }, text);
  a.href = href;
  return a;
}

/**
 * The filters, filled in from the current query.
 * @param {URLSearchParams} params
 */
function filterForm(params) {
  const inputs = FILTERS.map((name) => {
    if (name === "status") {
      const select = h(
        "select",
        { name },
        STATUSES.map((s) => h("option", { value: s }, s === "" ? "any" : s)),
      );
      select.value = params.get(name) ?? "";
      return h("label", {}, "Status", select);
    }
    const input = h("input", { name, size: "30", spellcheck: "false", placeholder: PLACEHOLDERS[name] });
    input.value = params.get(name) ?? "";
    return h(
      "label",
      {},
      name.replace("_id", "").replace(/^./, (c) => c.toUpperCase()),
      input,
    );
  });
  const form = h("form", { class: "inline grant-filters" }, inputs, h("button", { type: "submit" }, "Filter"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const name of FILTERS) {
      const value = /** @type {HTMLInputElement | HTMLSelectElement} */ (form.elements.namedItem(name)).value.trim();
      if (value !== "") next.set(name, value);
    }
    const href = grantsHref(next);
    // The view is busy from the submit until the list is read again, so that whoever waits for
    // `aria-busy=false` never takes the old list for the filtered one.
    form.closest("section")?.setAttribute("aria-busy", "true");
    if (location.hash === href) window.dispatchEvent(new HashChangeEvent("hashchange"));
    else location.hash = href;
  });
  return form;
}

/**
 * The agent by its registered name over its id, or the id alone when the key may not read agents.
 * @param {string} agentId
 * @param {Map<string, string>} names
 */
export function agentCell(agentId, names) {
  const name = names.get(agentId);
  const id = h("span", { class: "mono id" }, agentId);
  return name === undefined ? id : [h("strong", { class: "agent-name" }, name), h("br"), id];
}

/**
 * Usage in the budget's own format: uses against the count, held and settled money in the budget's currency.
 * @param {Grant} g
 */
function usage(g) {
  /** @type {(n: number | undefined) => string} */
  const unit = (n) => (n === 1 ? "use" : "uses");
  const uses =
    g.budget_count === null || g.budget_count === undefined
      ? `${g.uses} ${unit(g.uses)}`
      : `${g.uses} of ${g.budget_count} ${unit(g.budget_count)}`;
  return h(
    "ul",
    { class: "usage" },
    h("li", {}, uses),
    h("li", {}, money(g.held_minor, g.budget_currency), " held"),
    h("li", {}, money(g.settled_minor, g.budget_currency), " settled"),
  );
}

/**
 * A cell with the column's name, which a narrow screen shows beside the value (the table then stacks).
 * @param {string} label
 * @param {...Child} children
 */
function cell(label, ...children) {
  return h("td", { "data-label": label }, ...children);
}

/**
 * One grant as a row of the table.
 * @param {Grant} g
 * @param {boolean} mayReadLedger
 * @param {Map<string, string>} names
 */
function grantRow(g, mayReadLedger, names) {
  const ledger = link(`#ledger/${encodeURIComponent(g.id)}`, "ledger", "ledger-link");
  return h(
    "tr",
    { "data-grant-id": g.id },
    cell("grant", h("span", { class: "mono id" }, g.id)),
    cell("agent", agentCell(g.agent_id, names)),
    cell("status", badge(g.status), " ", badge(g.enforcement_mode)),
    cell("principal", `${g.principal_type}: `, g.principal_id),
    cell("scope", h("span", { class: "mono" }, (g.scope?.tool ?? []).join(", "))),
    cell("budget and usage", h("span", { class: "budget" }, money(g.budget_amount_minor, g.budget_currency)), usage(g)),
    cell("issued", time(g.issued_at)),
    cell("decisions", mayReadLedger ? ledger : h("span", { class: "muted" }, "–")),
  );
}

/**
 * Agent names by id, from the first page of agents (a key that may not list agents sees ids).
 * @param {import("./api.js").Capabilities} caps
 * @returns {Promise<Map<string, string>>}
 */
export async function agentNames(caps) {
  if (!caps.can("get", "/agents")) return new Map();
  try {
    /** @type {import("./api.js").AgentList} */
    const { agents } = await api("GET", "/agents?limit=1000");
    return new Map(agents.map((a) => [a.id, a.name]));
  } catch {
    return new Map();
  }
}

/**
 * @param {HTMLElement} section
 * @param {import("./api.js").ViewContext} ctx
 */
export async function grantsView(section, { caps, args }) {
  const params = new URLSearchParams(args[0] ?? "");
  section.append(filterForm(params));
  const query = new URLSearchParams();
  for (const name of [...FILTERS, "cursor"]) {
    const value = params.get(name);
    if (value) query.set(name, value);
  }
  query.set("limit", String(PAGE_SIZE));
  const [page, names] = await Promise.all([
    /** @type {Promise<import("./api.js").GrantPage>} */ (api("GET", `/grants?${query.toString()}`)),
    agentNames(caps),
  ]);
  if (page.grants.length === 0) {
    section.append(h("p", { class: "muted" }, params.has("cursor") ? "No more grants." : "No grant matches."));
  } else {
    const mayReadLedger = caps.can("get", "/grants/{}/ledger");
    section.append(
      h(
        "div",
        { class: "table-scroll" },
        h(
          "table",
          { class: "grants cards" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ["grant", "agent", "status", "principal", "scope", "budget and usage", "issued", "decisions"].map((c) => h("th", {}, c)),
            ),
          ),
          h(
            "tbody",
            {},
            page.grants.map((g) => grantRow(g, mayReadLedger, names)),
          ),
        ),
      ),
    );
  }
  const nav = h("p", { class: "actions" });
  if (params.has("cursor")) {
    const first = new URLSearchParams(params);
    first.delete("cursor");
    nav.append(link(grantsHref(first), "First page", "first-page"));
  }
  if (page.next_cursor !== null) {
    const next = new URLSearchParams(params);
    next.set("cursor", page.next_cursor);
    nav.append(link(grantsHref(next), "Next page", "next-page"));
  }
  section.append(nav);
  if (!caps.can("get", "/grants/{}/ledger"))
    section.append(message("notice", "Reading a tree's decisions needs the auditor, issuer or admin role."));
}
