// Gated decisions waiting for a human (who can approve, and an approval with an amount ceiling) and
// the decision ledger of a grant tree (each decision's nine gates, its outcome, chain verification).
// @ts-check

import { api, problemText, seg } from "./api.js";
import { badge, fields, h, message, money, renderValue, replace, time } from "./dom.js";
import { showHidden } from "./policy-layout.js";

/**
 * @typedef {import("./api.js").PendingDecision} PendingDecision
 * @typedef {import("./api.js").DecisionApproval} DecisionApproval
 * @typedef {import("./api.js").LedgerRecord} LedgerRecord
 * @typedef {import("./api.js").LedgerVerification} LedgerVerification
 * @typedef {import("./api.js").ViewContext} ViewContext
 */

export const GATES = ["grant", "status", "window", "audience", "certification", "scope", "conditions", "policy", "budget"];
const LEDGER_ID = /^led_[0-9a-z]{26}$/;
const GRANT_ID = /^grt_[0-9a-z]{26}$/;

/**
 * The nine gates in order, each with its result; a gate the record does not list shows as not reached.
 * @param {unknown} gates
 */
export function gateStrip(gates) {
  /** @type {import("./api.js").GateResult[]} */
  const list = Array.isArray(gates) ? gates : [];
  const byName = new Map(list.map((g) => [g.gate, g]));
  return h(
    "ol",
    { class: "gates", "aria-label": "gates" },
    GATES.map((name) => {
      const g = byName.get(name);
      const result = g?.result ?? "not_reached";
      const li = h("li", { class: result, "data-gate": name }, h("div", {}, name), h("div", {}, result));
      li.title = g ? showHidden(`${g.code ?? ""} ${g.reason ?? ""}`.trim()) : "not reached";
      return li;
    }),
  );
}

/**
 * "Who can approve": the residual of the policy over `approver`, shown as the expression it is.
 * @param {unknown} residual
 */
export function whoCanApprove(residual) {
  return h(
    "div",
    { class: "residual" },
    h("h3", {}, "Who can approve"),
    typeof residual === "string" ? h("pre", { class: "mono" }, showHidden(residual)) : h("p", { class: "muted" }, "the server did not say"),
  );
}

/**
 * The agent by its registered name, with its id.
 * @param {PendingDecision} d
 */
function agentLabel(d) {
  if (typeof d.agent_name !== "string") return d.agent_id ?? null;
  return h("span", {}, h("strong", { class: "agent-name" }, d.agent_name), " ", h("span", { class: "mono muted id" }, d.agent_id ?? ""));
}

/**
 * The action's own arguments, as the agent sent them: what the approver approves.
 * @param {import("./api.js").ActionRequest | undefined} request
 */
function argumentsOf(request) {
  const args = request?.args;
  if (args === undefined || args === null) return h("span", { class: "muted" }, "none sent");
  return h("div", { class: "action-args" }, renderValue(args));
}

/**
 * Why no approve button: the residual does not admit the signed-in identity, and the server would refuse.
 * @param {unknown} identity
 * @param {unknown} residual
 */
function notAdmitted(identity, residual) {
  return message(
    "notice",
    h(
      "span",
      { class: "not-admitted" },
      "You",
      typeof identity === "string" ? [" (", h("span", { class: "mono" }, identity), ")"] : null,
      " cannot approve this action: only an approver satisfying ",
      h("code", {}, showHidden(String(residual))),
      " can, and the server refuses anyone else. Ask one of them.",
    ),
  );
}

/**
 * The approval's body from the form's fields: only what was filled in.
 * @param {HTMLInputElement} ceiling
 * @param {HTMLInputElement} minutes
 * @param {HTMLInputElement} note
 */
function approvalBody(ceiling, minutes, note) {
  /** @type {Record<string, unknown>} */
  const body = {};
  if (ceiling.value !== "") body.amount_minor_max = Number(ceiling.value);
  if (minutes.value !== "") body.expires_in_minutes = Number(minutes.value);
  if (note.value.trim() !== "") body.note = note.value.trim();
  return body;
}

/**
 * What an approval shows once made: the approval id the agent retries with, and its terms.
 * @param {DecisionApproval} approval
 */
function approvedView(approval) {
  return [
    message("success", "Approved. The agent retries with this approval id."),
    fields([
      ["approval_id", h("span", { class: "mono approval-id" }, approval.approval_id)],
      ["grant", approval.grant_id],
      ["tool", approval.tool],
      ["ceiling", money(approval.amount_minor_max, approval.currency)],
      ["approver", approval.approver],
      ["expires_at", time(approval.expires_at)],
    ]),
  ];
}

/**
 * The form that approves a gated decision: for one listed decision (`prefill`), or for any ledger id.
 * @param {{ ledger_id: string, amount_minor: number | null | undefined } | null} prefill
 * @param {(approval: DecisionApproval) => void} [onApproved]
 */
function approvalForm(prefill, onApproved) {
  const ledger = h("input", { name: "ledger_id", placeholder: "led_…", size: "34", spellcheck: "false", required: true });
  const ceiling = h("input", { name: "amount_minor_max", type: "number", min: "0", step: "1", placeholder: "the decision's amount" });
  const minutes = h("input", { name: "expires_in_minutes", type: "number", min: "1", max: "1440", step: "1", placeholder: "60" });
  const note = h("input", { name: "note", maxlength: "1000", placeholder: "optional" });
  if (prefill?.ledger_id) ledger.value = prefill.ledger_id;
  if (prefill && Number.isSafeInteger(prefill.amount_minor)) ceiling.value = String(prefill.amount_minor);
  const out = h("div", { class: "approval-result" });
  const button = h("button", { type: "submit" }, "Approve this action");
  const form = h(
    "form",
    { class: "inline approve-decision" },
    prefill?.ledger_id ? null : h("label", {}, "Ledger id", ledger),
    h("label", {}, "Amount ceiling (minor units)", ceiling),
    h("label", {}, "Expires in (minutes)", minutes),
    h("label", {}, "Note", note),
    button,
    out,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const id = ledger.value.trim();
    if (!LEDGER_ID.test(id)) {
      replace(out, message("error", "A ledger id looks like led_ followed by 26 characters."));
      return;
    }
    button.disabled = true;
    try {
      /** @type {DecisionApproval} */
      const approval = await api("POST", `/decisions/${seg(id)}/approve`, approvalBody(ceiling, minutes, note));
      if (prefill?.ledger_id) {
        // Approved: the form stays as a record of what was approved, and cannot be sent again.
        button.textContent = "Approved";
        for (const input of form.querySelectorAll("input")) input.disabled = true;
      } else {
        // The form without a list approves one ledger id after another.
        button.disabled = false;
      }
      replace(out, ...approvedView(approval));
      onApproved?.(approval);
    } catch (error) {
      button.disabled = false;
      replace(out, message("error", problemText(error)));
    }
  });
  return form;
}

/**
 * The agent stopped waiting: its call was refused, so an approval now serves only a retry of the same action.
 * @param {import("./api.js").Abandonment} abandoned
 */
function abandonedNotice(abandoned) {
  const why =
    abandoned.reason === "cancelled"
      ? "its client cancelled the call"
      : `no approval came within ${Math.round(abandoned.waited_ms / 1000)} s`;
  const box = message(
    "notice",
    "The agent stopped waiting at ",
    time(abandoned.abandoned_at),
    ` (${why}); its call was refused. Approving now lets only a retry of the same action through.`,
  );
  box.classList.add("abandoned");
  return box;
}

/**
 * @param {HTMLElement} section
 * @param {ViewContext} ctx
 */
export async function gatedView(section, { caps, recount }) {
  const mayApprove = caps.can("post", "/decisions/{}/approve");
  if (!mayApprove) section.append(message("notice", "Read only: approving an action needs a human key with the approver or admin role."));
  if (caps.served("get", "/decisions/pending")) {
    /** @type {import("./api.js").PendingDecisionList} */
    const { decisions } = await api("GET", "/decisions/pending?limit=100");
    if (decisions.length === 0) section.append(h("p", { class: "muted" }, "No gated decision is waiting for a human."));
    for (const d of decisions) {
      const amount = d.request?.amount_minor ?? d.amount_minor;
      const currency = d.request?.currency ?? d.currency;
      const card = h(
        "article",
        { class: "card decision", "data-ledger-id": d.ledger_id },
        h("h3", {}, "Decision ", h("span", { class: "mono id" }, d.ledger_id), " ", badge(d.outcome)),
        fields([
          ["agent", agentLabel(d)],
          ["grant", d.grant_id ? h("span", { class: "mono id" }, d.grant_id) : null],
          ["tool", d.request?.tool ?? d.tool ?? null],
          ["amount", money(amount, currency)],
          ["arguments", argumentsOf(d.request)],
          ["decided_at", time(d.decided_at)],
          ["reason", d.reason ?? null],
        ]),
        whoCanApprove(d.residual),
        gateStrip(d.gates),
      );
      if (d.abandoned) card.append(abandonedNotice(d.abandoned));
      if (mayApprove && d.caller_admitted === false) card.append(notAdmitted(caps.me?.identity, d.residual));
      else if (mayApprove) {
        card.append(
          approvalForm({ ledger_id: d.ledger_id, amount_minor: amount }, () => {
            card.classList.add("done");
            void recount?.();
          }),
        );
      }
      section.append(card);
    }
    return;
  }
  section.append(
    message(
      "notice",
      "This server does not list gated decisions yet (no GET /v1/decisions/pending). ",
      "Enter the ledger id the agent reported with its gated answer; the residual it received says who can approve.",
    ),
  );
  if (mayApprove) section.append(h("div", { class: "card" }, h("h3", {}, "Approve a gated action"), approvalForm(null)));
}

/**
 * A settlement: what was settled against which decision, in the hold's currency (it has no request and no gates).
 * @param {LedgerRecord} r
 */
function settlementCard(r) {
  /** @type {import("./api.js").Settlement} */
  const s = r.settlement ?? {};
  return h(
    "article",
    { class: "card ledger-record settlement", "data-ledger-id": r.ledger_id },
    h("h3", {}, `#${r.seq ?? "?"} `, h("span", { class: "mono id" }, r.ledger_id), " ", badge("settlement")),
    fields([
      ["decision", s.decision_ledger_id ? h("span", { class: "mono id" }, s.decision_ledger_id) : null],
      ["grant", r.grant_id ?? null],
      ["settled", money(s.amount_minor, s.currency)],
      ["held", money(s.held_minor, s.currency)],
      ["released", money(s.released_minor, s.currency)],
      ["settled by", s.settled_by ?? null],
      ["settled_at", time(r.decided_at ?? r.at)],
      ["hash", h("span", { class: "mono" }, String(r.hash ?? "").slice(0, 16))],
    ]),
  );
}

/**
 * One record of the ledger: a decision with its gates, or a settlement.
 * @param {LedgerRecord} r
 */
function recordCard(r) {
  if (r.kind === "settlement") return settlementCard(r);
  /** @type {import("./api.js").ActionRequest} */
  const req = r.request ?? {};
  return h(
    "article",
    { class: "card ledger-record", "data-ledger-id": r.ledger_id },
    h(
      "h3",
      {},
      `#${r.seq ?? "?"} `,
      h("span", { class: "mono id" }, r.ledger_id),
      " ",
      badge(r.outcome ?? r.kind),
      r.would_outcome ? [" would be ", badge(r.would_outcome)] : null,
    ),
    fields([
      ["grant", r.grant_id ?? req.grant_id ?? null],
      ["tool", req.tool ?? r.tool ?? null],
      ["amount", money(req.amount_minor ?? r.amount_minor, req.currency ?? r.currency)],
      ["mode", r.mode ?? r.enforcement_mode ?? null],
      ["approver", r.approver ?? null],
      ["reason", r.reason ?? null],
      ["decided_at", time(r.decided_at ?? r.at)],
      ["hash", h("span", { class: "mono" }, String(r.hash ?? "").slice(0, 16))],
    ]),
    r.residual ? whoCanApprove(r.residual) : null,
    Array.isArray(r.gates) ? gateStrip(r.gates) : null,
  );
}

/**
 * The chains' verification: verified, or where the first break is.
 * @param {LedgerVerification} v
 * @param {string | undefined} treeId
 */
function verification(v, treeId, id = "chain-status") {
  if (v.ok === true)
    return message(
      "success",
      h("strong", { id }, id === "chain-status" ? "Chains verified" : "This tree's chain verified"),
      ` (${v.trees} tree${v.trees === 1 ? "" : "s"}, ${v.records} record${v.records === 1 ? "" : "s"})`,
    );
  const b = v.broken ?? {};
  const here = treeId !== undefined && b.tree_id === treeId;
  return message(
    "error",
    h("strong", { id }, here ? "This tree's chain is broken" : "A chain is broken"),
    ` at record ${b.seq ?? "?"} (${b.ledger_id ?? "?"}) of tree ${b.tree_id ?? "?"}: ${b.problem ?? "unknown"}`,
  );
}

/**
 * @param {HTMLElement} section
 * @param {ViewContext} ctx
 */
export async function ledgerView(section, { caps, args }) {
  const input = h("input", { name: "grant_id", placeholder: "grt_…", size: "34", spellcheck: "false", required: true });
  if (args[0]) input.value = args[0];
  const out = h("div", {});
  const form = h(
    "form",
    { class: "inline" },
    h("label", {}, "Grant id (any grant of the tree)", input),
    h("button", { type: "submit" }, "Show ledger"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    location.hash = `#ledger/${encodeURIComponent(input.value.trim())}`;
  });
  section.append(form, out);
  if (args[0] && !GRANT_ID.test(args[0])) {
    out.append(message("error", "A grant id looks like grt_ followed by 26 characters."));
    return;
  }
  /** @type {import("./api.js").LedgerTree | null} */
  const tree = args[0] && caps.can("get", "/grants/{}/ledger") ? await api("GET", `/grants/${seg(args[0])}/ledger?limit=1000`) : null;
  if (caps.can("get", "/ledger/verify")) {
    /** @type {LedgerVerification} */
    const v = await api("GET", "/ledger/verify");
    out.append(h("h3", {}, "Chain verification"), verification(v, tree?.tree_id ?? tree?.root_id));
  } else {
    out.append(message("notice", "Verifying the ledger's chains needs the auditor or admin role."));
  }
  if (!caps.served("get", "/grants/{}/ledger")) {
    out.append(
      message(
        "notice",
        "This server does not serve a tree's decisions yet (no GET /v1/grants/{grant_id}/ledger); ",
        "the records appear here, each with its nine gates, once it does.",
      ),
    );
    return;
  }
  if (!caps.can("get", "/grants/{}/ledger")) {
    out.append(message("notice", "Reading a tree's decisions needs the auditor, issuer or admin role."));
    return;
  }
  if (tree === null) return;
  out.append(h("p", {}, "Tree ", h("span", { class: "mono" }, tree.tree_id ?? tree.root_id ?? args[0])));
  if (tree.verification) out.append(verification(tree.verification, tree.tree_id, "tree-chain-status"));
  for (const record of tree.records ?? []) out.append(recordCard(record));
}
