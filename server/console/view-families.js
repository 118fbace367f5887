// Grant families: the families the key may read, one family's versions, and the review of a candidate
// version through the server's impact preview: the replay of the past and the symbolic diff, with
// each widening's witness shown as its input and the outcome before and after.
// @ts-check

import { ApiError, api, problemText, seg } from "./api.js";
import { badge, fields, h, message, replace, time, viewLink } from "./dom.js";

/**
 * The bodies this view reads (the server's schemas in packages/api are the authority).
 * @typedef {{ id: string, name: string, version: number, content_hash?: string, reviewed_by?: string[],
 *   description?: string, parameters?: Record<string, unknown>, grant?: Record<string, unknown>,
 *   approval?: Record<string, unknown>, examples?: unknown[], pushed_at?: string, pushed_by?: string, versions?: number[] }} Family
 * @typedef {{ families: Family[], next_after: string | null }} FamilyList
 * @typedef {{ axis?: string, input?: Record<string, unknown>, parameters?: Record<string, unknown>, old: boolean, new: boolean }} Witness
 * @typedef {{ relation: string, widening?: Witness[], narrowing?: Witness[], reason?: string }} Symbolic
 * @typedef {{ mode?: string, replayed?: number, refusals?: number, enforce_refusals?: number }} ModeSummary
 * @typedef {{ ledger_id: string, grant_id?: string, tool?: string, decided_at?: string,
 *   before?: { outcome?: string }, after?: { outcome?: string, reason?: string | null } }} Change
 * @typedef {{ family_id?: string, current_version?: number, candidate_version?: number, days?: number, since?: string,
 *   replayed?: number, changed?: number, truncated?: boolean, candidate_modes?: ModeSummary[], changes?: Change[],
 *   skipped?: { grant_id: string, decisions: number, reason: string }[], symbolic?: Symbolic }} Impact
 */

/** Families per page of the list; the server allows up to 1,000. */
const PAGE_SIZE = 100;
/** Witnesses of each direction shown; the first of each list is the one nearest the default action. */
const WITNESSES_SHOWN = 5;
/** The members of a stored version that a push's body has too (the server adds the others). */
const BODY_FIELDS = ["version", "reviewed_by", "description", "parameters", "grant", "approval", "examples"];

/**
 * @param {HTMLElement} section
 * @param {import("./api.js").ViewContext} ctx
 */
export async function familiesView(section, { caps, args }) {
  const [familyId, version] = args;
  if (familyId === undefined || familyId === "") {
    await familyList(section);
    return;
  }
  /** @type {Family} */
  const latest = await api("GET", `/grant-families/${seg(familyId)}`);
  const shown =
    version !== undefined && version !== "" && Number(version) !== latest.version
      ? /** @type {Family} */ (await api("GET", `/grant-families/${seg(familyId)}?version=${seg(version)}`))
      : latest;
  section.append(
    h("p", {}, viewLink("families", "All families", { class: "all-families" })),
    h("h3", {}, shown.name, " ", h("span", { class: "tag" }, `version ${shown.version}`)),
    versionLinks(latest, shown.version),
    versionFields(shown),
  );
  if (caps.can("post", "/grant-families/{}/impact")) section.append(reviewForm(latest, shown));
  else section.append(message("notice", "Reviewing a candidate version needs the admin, issuer, approver or auditor role."));
}

/**
 * Every family the key may read, the latest version of each.
 * @param {HTMLElement} section
 */
async function familyList(section) {
  /** @type {FamilyList} */
  const { families } = await api("GET", `/grant-families?limit=${PAGE_SIZE}`);
  if (families.length === 0) {
    section.append(h("p", { class: "muted" }, "No family has been pushed."));
    return;
  }
  const rows = families.map((f) =>
    h(
      "tr",
      { "data-family-id": f.id },
      h("td", {}, viewLink(`families/${f.id}`, f.name, { class: "family-link" })),
      h("td", {}, h("span", { class: "mono id" }, f.id)),
      h("td", { class: "mono" }, String(f.version)),
      h("td", {}, (f.reviewed_by ?? []).join(", ")),
      h("td", {}, time(f.pushed_at), f.pushed_by ? ` by ${f.pushed_by}` : null),
    ),
  );
  const head = h(
    "tr",
    {},
    ["family", "id", "latest version", "reviewed by", "pushed"].map((c) => h("th", {}, c)),
  );
  section.append(h("div", { class: "table-scroll" }, h("table", { class: "families cards" }, h("thead", {}, head), h("tbody", {}, rows))));
}

/**
 * A link to each version of the family the server lists (numbers may skip: a push may raise the
 * version by more than one), the one shown marked.
 * @param {Family} latest
 * @param {number} current
 */
function versionLinks(latest, current) {
  const versions = latest.versions ?? [latest.version];
  return h(
    "p",
    { class: "versions" },
    "Versions: ",
    versions.map((v) => [
      viewLink(`families/${latest.id}/${v}`, String(v), { "aria-current": v === current ? "page" : undefined, "data-version": String(v) }),
      " ",
    ]),
  );
}

/**
 * What one version holds, as the server keeps it.
 * @param {Family} f
 */
function versionFields(f) {
  return fields([
    ["family id", f.id],
    ["content hash", h("span", { class: "mono" }, f.content_hash ?? "")],
    ["reviewed by", f.reviewed_by ?? []],
    ["pushed", h("span", {}, time(f.pushed_at), f.pushed_by ? ` by ${f.pushed_by}` : null)],
    ["description", f.description ?? null],
    ["parameters", f.parameters ?? {}],
    ["grant", f.grant ?? {}],
    ["approval", f.approval ?? null],
  ]);
}

/**
 * A stored version as a push's body: the start of a candidate the reviewer edits.
 * @param {Family} f
 */
function asBody(f) {
  /** @type {Record<string, unknown>} */
  const body = { id: f.name };
  const source = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (f));
  for (const name of BODY_FIELDS) if (source[name] !== undefined) body[name] = source[name];
  return body;
}

/**
 * The review form: a candidate version as the family's YAML file (or the JSON `authority compile`
 * writes from it: JSON is YAML), the window in days, and the preview's answer below it. The server
 * compiles the text as `authority compile` does and compares it with its latest version; the text
 * starts as the version shown, so an older one previews a roll-back.
 * @param {Family} latest
 * @param {Family} shown
 */
function reviewForm(latest, shown) {
  const start = shown.version === latest.version ? { ...asBody(latest), version: latest.version + 1 } : asBody(shown);
  const text = h("textarea", { name: "candidate", rows: "18", cols: "80", spellcheck: "false", "aria-label": "candidate version" });
  text.value = JSON.stringify(start, null, 2);
  const days = h("input", { name: "days", type: "number", min: "1", max: "90", value: "30", size: "4" });
  const result = h("div", { class: "impact-result", "aria-live": "polite" });
  const form = h(
    "form",
    { class: "card review" },
    h("h3", {}, "Review a candidate version"),
    h(
      "p",
      { class: "muted" },
      `The candidate is compared with version ${latest.version}, the latest: the replay of its grants' past decisions, and the symbolic diff of what could change for any action. Paste the family's YAML file as it stands in review, or edit the version shown. Nothing is created.`,
    ),
    h("label", {}, "Candidate (YAML or JSON)", text),
    h("label", {}, "Replay the last N days", days),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Preview impact")),
    result,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    await preview(form, latest.id, text.value, Number(days.value), result);
  });
  return form;
}

/**
 * Sends the candidate's text to the impact preview and shows its answer, or why it was refused:
 * a text that does not compile is listed error by error, at its line and column in the text.
 * @param {HTMLFormElement} form
 * @param {string} familyId
 * @param {string} source
 * @param {number} days
 * @param {HTMLElement} result
 */
async function preview(form, familyId, source, days, result) {
  form.setAttribute("aria-busy", "true");
  try {
    /** @type {Impact} */
    const impact = await api("POST", `/grant-families/${seg(familyId)}/impact`, { source, days });
    replace(result, impactView(impact));
  } catch (error) {
    result.replaceChildren(message("error", problemText(error)), diagnosticList(error));
  } finally {
    form.setAttribute("aria-busy", "false");
  }
}

/**
 * The compiler's errors a refusal carries, one line each with its place in the candidate's text.
 * @param {unknown} error
 */
function diagnosticList(error) {
  const problem = error instanceof ApiError ? /** @type {{ diagnostics?: unknown }} */ (error.problem ?? {}) : {};
  const list = Array.isArray(problem.diagnostics) ? problem.diagnostics : [];
  return h(
    "ul",
    { class: "diagnostics" },
    ...list.map((/** @type {{ line?: number, column?: number, code?: string, message?: string }} */ d) =>
      h("li", {}, h("span", { class: "mono" }, `line ${d.line}, column ${d.column}`), ` ${d.code}: ${d.message}`),
    ),
  );
}

/**
 * The preview's answer: the replay summary, then the symbolic relation and its witnesses.
 * @param {Impact} impact
 */
function impactView(impact) {
  const symbolic = impact.symbolic ?? { relation: "unknown", reason: "the server sent no symbolic diff" };
  return [
    h("h4", {}, "Replay of the past"),
    fields([
      ["compared", `version ${impact.current_version} (latest) with candidate version ${impact.candidate_version}`],
      ["window", h("span", {}, `${impact.days} days, since `, time(impact.since))],
      ["decisions replayed", impact.replayed ?? 0],
      ["outcomes that would change", h("span", { class: "changed-count mono" }, String(impact.changed ?? 0))],
      ["truncated", impact.truncated ?? false],
      ["skipped grants", impact.skipped ?? []],
    ]),
    changesTable(impact.changes ?? []),
    h("h4", {}, "Symbolic diff, for any action"),
    h("p", { class: "relation" }, "The candidate ", badge(symbolic.relation), " ", relationText(symbolic.relation)),
    symbolic.reason ? message("notice", symbolic.reason) : null,
    witnessList("widening", "Widening: the candidate allows what the latest version refuses", symbolic.widening ?? []),
    witnessList("narrowing", "Narrowing: the candidate refuses what the latest version allows", symbolic.narrowing ?? []),
  ];
}

/** @param {string} relation */
function relationText(relation) {
  /** @type {Record<string, string>} */
  const words = {
    equivalent: "decides every action as the latest version does.",
    narrows: "only refuses more than the latest version.",
    widens: "allows something the latest version refuses.",
    incomparable: "both allows and refuses something the latest version does not.",
    unknown: "could not be compared within the solver's limits.",
  };
  return words[relation] ?? "";
}

/**
 * The replayed decisions whose outcome would change.
 * @param {Change[]} changes
 */
function changesTable(changes) {
  if (changes.length === 0) return h("p", { class: "muted" }, "No past decision would change.");
  const head = h(
    "tr",
    {},
    ["decision", "grant", "tool", "decided", "before", "after"].map((c) => h("th", {}, c)),
  );
  const rows = changes.map((c) =>
    h(
      "tr",
      { "data-ledger-id": c.ledger_id },
      h("td", {}, h("span", { class: "mono id" }, c.ledger_id)),
      h("td", {}, h("span", { class: "mono id" }, c.grant_id ?? "")),
      h("td", { class: "mono" }, c.tool ?? ""),
      h("td", {}, time(c.decided_at)),
      h("td", {}, badge(c.before?.outcome)),
      h("td", {}, badge(c.after?.outcome), c.after?.reason ? [" ", c.after.reason] : null),
    ),
  );
  return h("div", { class: "table-scroll" }, h("table", { class: "impact-changes cards" }, h("thead", {}, head), h("tbody", {}, rows)));
}

/**
 * The witnesses of one direction, each as the input's fields and what each version decides.
 * @param {string} kind
 * @param {string} title
 * @param {Witness[]} witnesses
 */
function witnessList(kind, title, witnesses) {
  if (witnesses.length === 0) return null;
  /** @type {(allowed: boolean) => HTMLElement} */
  const outcome = (allowed) => badge(allowed ? "allow" : "deny");
  return h(
    "section",
    { class: ["witnesses", kind] },
    h("h5", {}, title),
    witnesses.slice(0, WITNESSES_SHOWN).map((w) =>
      h(
        "article",
        { class: "witness card", "data-axis": w.axis ?? "policy" },
        fields([
          ["axis", w.axis ?? "policy"],
          ["latest version", outcome(w.old)],
          ["candidate", outcome(w.new)],
          ["parameters", w.parameters ?? {}],
        ]),
        h("h6", {}, "Input"),
        h("div", { class: "witness-input" }, witnessInput(w.input ?? {})),
      ),
    ),
    witnesses.length > WITNESSES_SHOWN ? h("p", { class: "muted" }, `and ${witnesses.length - WITNESSES_SHOWN} more`) : null,
  );
}

/**
 * A witness's input, field by field; an empty string reads as `""`, so no field looks missing.
 * @param {Record<string, unknown>} input
 */
function witnessInput(input) {
  return fields(Object.entries(input).map(([name, value]) => [name, value === "" ? h("span", { class: "mono muted" }, '""') : value]));
}
