// Pending grants: each grant's full shape and its policy laid out for reading, with an approve form
// for keys that may approve (a human with `approver` or `admin`).
// @ts-check

import { api, problemText, seg } from "./api.js";
import { badge, fields, h, message, money, renderValue, time } from "./dom.js";
import { layoutPolicy, showHidden } from "./policy-layout.js";
import { agentCell, agentNames } from "./view-grants.js";

/**
 * @typedef {import("./api.js").Grant} Grant
 * @typedef {import("./api.js").ViewContext} ViewContext
 */

/** Fields shown first, in this order; every other field of the grant follows, so nothing is hidden. */
const LEAD = [
  "id",
  "status",
  "enforcement_mode",
  "agent_id",
  "principal_type",
  "principal_id",
  "audience",
  "scope",
  "budget_amount_minor",
  "budget_currency",
  "budget_count",
  "ttl_hours",
  "issued_at",
  "expires_at",
  "conditions",
  "delegation_policy",
  "delegation_depth_max",
  "issued_by",
  "approval_required",
];

/**
 * One field of a grant, shown for its kind: a badge, money, a tool list, a time or a value.
 * @param {Grant} grant
 * @param {string} name
 */
function fieldValue(grant, name) {
  const value = grant[name];
  if (name === "status" || name === "enforcement_mode") return badge(value);
  if (name === "budget_amount_minor") return h("span", {}, money(grant.budget_amount_minor, grant.budget_currency));
  if (name === "scope" && Array.isArray(grant.scope?.tool)) return h("span", { class: "mono" }, grant.scope.tool.join(", "));
  if (name === "budget_count") return h("span", { class: "mono" }, value === null ? "no limit" : String(value));
  if (/_at$/.test(name) && typeof value === "string") return time(value);
  return renderValue(value);
}

/**
 * A policy laid out for reading, with the text as stored under it when the two differ in shape.
 * @param {unknown} text
 */
export function policyBlock(text) {
  // The policy as stored, with its hidden characters shown as escapes (an approver reads every one).
  const raw = showHidden(typeof text === "string" ? text : "true");
  return h(
    "div",
    { class: "policy-ref" },
    h("pre", { class: "policy" }, layoutPolicy(raw)),
    raw.length > 60 ? h("details", {}, h("summary", { class: "muted" }, "policy as stored"), h("pre", { class: "policy-raw" }, raw)) : null,
  );
}

/**
 * Every field of a grant: the policy first, then the lead fields, then the rest.
 * @param {Grant} grant
 */
export function grantShape(grant) {
  const names = [...LEAD.filter((n) => n in grant), ...Object.keys(grant).filter((n) => !LEAD.includes(n) && n !== "policy")];
  const shape = fields(names.map((name) => [name, fieldValue(grant, name)]));
  shape.classList.add("shape");
  return [h("h3", {}, "Policy"), policyBlock(grant.policy), h("h3", {}, "Every field"), shape];
}

/**
 * The form that approves `grant`; `card` is marked done once it is approved.
 * @param {Grant} grant
 * @param {ViewContext} ctx
 * @param {HTMLElement} card
 */
function approveForm(grant, ctx, card) {
  const note = h("input", { name: "note", maxlength: "1000", placeholder: "optional" });
  const out = h("div", {});
  const button = h("button", { type: "submit" }, "Approve");
  const form = h("form", { class: "inline approve" }, h("label", {}, "Note", note), button, out);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    button.disabled = true;
    try {
      const body = note.value.trim() === "" ? {} : { note: note.value.trim() };
      /** @type {import("./api.js").GrantApproval} */
      const approved = await api("POST", `/grants/${seg(grant.id)}/approve`, body);
      card.classList.add("done");
      void ctx.recount?.();
      form.replaceWith(
        message("success", `Approved by ${approved.approved_by} at ${approved.approved_at}; the grant is ${approved.status}.`),
      );
    } catch (error) {
      button.disabled = false;
      out.replaceChildren(message("error", problemText(error)));
    }
  });
  return form;
}

/**
 * @param {HTMLElement} section
 * @param {ViewContext} ctx
 */
export async function pendingView(section, ctx) {
  const { caps } = ctx;
  if (!caps.can("get", "/grants/pending")) {
    section.append(message("notice", "Your roles do not include reading pending grants."));
    return;
  }
  const [{ grants }, names] = await Promise.all([
    /** @type {Promise<import("./api.js").GrantPage>} */ (api("GET", "/grants/pending?limit=100")),
    agentNames(caps),
  ]);
  const mayApprove = caps.can("post", "/grants/{}/approve");
  if (!mayApprove)
    section.append(h("p", { class: "muted" }, "Read only: approving a grant needs a human key with the approver or admin role."));
  if (grants.length === 0) section.append(h("p", { class: "muted", id: "no-pending" }, "No grant is awaiting approval."));
  for (const grant of grants) {
    const card = h(
      "article",
      { class: "card grant", "data-grant-id": grant.id },
      // The agent by its registered name, as every other view shows it, with its id under it.
      h("h3", {}, "Grant ", h("span", { class: "mono id" }, grant.id), " for ", agentCell(grant.agent_id, names)),
      grantShape(grant),
    );
    if (mayApprove) card.append(approveForm(grant, ctx, card));
    section.append(card);
  }
}
