// Agents with their certificates: certify (a human with certifier or admin) and revoke; a revoked
// certificate stays in the history, marked, because certification is revoked by field, never deleted.
// @ts-check

import { api, problemText, seg } from "./api.js";
import { badge, fields, h, message, renderValue, replace, time } from "./dom.js";

/**
 * @typedef {import("./api.js").Agent} Agent
 * @typedef {import("./api.js").Certificate} Certificate
 * @typedef {import("./api.js").ViewContext} ViewContext
 */

/**
 * One certificate, with a revoke form for a key that may revoke it.
 * @param {Certificate} cert
 * @param {ViewContext} ctx
 * @param {() => Promise<void>} reload
 */
function certificateRow(cert, ctx, reload) {
  const actions = h("td", {});
  if (cert.status === "valid" && ctx.caps.can("post", "/certificates/{}/revoke")) {
    const reason = h("input", { name: "reason", placeholder: "reason", maxlength: "1000" });
    const button = h("button", { type: "submit", class: "danger" }, "Revoke");
    const out = h("span", {});
    const form = h("form", { class: "inline revoke-certificate" }, reason, button, out);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      button.disabled = true;
      try {
        await api("POST", `/certificates/${seg(cert.id)}/revoke`, reason.value.trim() === "" ? {} : { reason: reason.value.trim() });
        await reload();
      } catch (error) {
        button.disabled = false;
        replace(out, message("error", problemText(error)));
      }
    });
    actions.append(form);
  }
  const details = h("details", {}, h("summary", {}, "details"), renderValue(cert));
  // Each cell carries its column's name: the certificates are cards of labelled cells (console.css).
  /** @type {(label: string, ...children: import("./dom.js").Child[]) => HTMLTableCellElement} */
  const cell = (label, ...children) => h("td", { "data-label": label }, ...children);
  return h(
    "tr",
    { class: "certificate", "data-certificate-id": cert.id, "data-status": cert.status },
    cell("certificate", h("span", { class: "mono id" }, cert.id)),
    cell("status", badge(cert.status)),
    cell("environment", cert.environment),
    cell("issued by", cert.issued_by, cert.issued_by_email && cert.issued_by_email !== cert.issued_by ? ` <${cert.issued_by_email}>` : ""),
    cell("issued", time(cert.issued_at)),
    cell("basis", cert.basis, details),
    cell(
      "revoked",
      cert.revoked_at
        ? [time(cert.revoked_at), " by ", cert.revoked_by ?? "?", cert.revocation_reason ? ` (${cert.revocation_reason})` : ""]
        : "none",
    ),
    actions,
  );
}

/**
 * The form that certifies `agent`.
 * @param {Agent} agent
 * @param {() => Promise<void>} reload
 */
function certifyForm(agent, reload) {
  /** @type {(name: string, placeholder: string) => HTMLInputElement} */
  const input = (name, placeholder) => h("input", { name, placeholder, required: true, maxlength: "1000", spellcheck: "false" });
  const basis = input("basis", "evaluation report");
  const provenance = input("provenance_version", "model version");
  const manifest = input("manifest_hash", "sha256:…");
  const content = input("content_hash", "sha256:…");
  const market = h("input", { name: "market_profile", placeholder: "optional, e.g. EU", maxlength: "200" });
  const checks = h("textarea", { name: "checks", placeholder: "one check per line", required: true });
  const button = h("button", { type: "submit" }, "Certify");
  const out = h("div", {});
  const form = h(
    "form",
    { class: "inline certify" },
    h("label", {}, "Basis", basis),
    h("label", {}, "Provenance version", provenance),
    h("label", {}, "Manifest hash", manifest),
    h("label", {}, "Content hash", content),
    h("label", {}, "Market profile", market),
    h("label", {}, "Checks", checks),
    button,
    out,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    /** @type {Record<string, unknown>} */
    const body = {
      basis: basis.value.trim(),
      provenance_version: provenance.value.trim(),
      manifest_hash: manifest.value.trim(),
      content_hash: content.value.trim(),
      checks: checks.value
        .split("\n")
        .map((c) => c.trim())
        .filter((c) => c !== ""),
    };
    if (market.value.trim() !== "") body.market_profile = market.value.trim();
    button.disabled = true;
    try {
      await api("POST", `/agents/${seg(agent.id)}/certification`, body);
      await reload();
    } catch (error) {
      button.disabled = false;
      replace(out, message("error", problemText(error)));
    }
  });
  return form;
}

/**
 * An agent with its certification, read again after each change.
 * @param {Agent} agent
 * @param {ViewContext} ctx
 */
async function agentCard(agent, ctx) {
  const card = h("article", { class: "card agent", "data-agent-id": agent.id });
  const reload = async () => {
    /** @type {import("./api.js").CertificationStatus} */
    const status = await api("GET", `/agents/${seg(agent.id)}/certification`);
    replace(
      card,
      h(
        "h3",
        {},
        agent.name,
        " ",
        h("span", { class: "mono muted id" }, agent.id),
        " ",
        badge(status.certified ? "certified" : "uncertified"),
      ),
      fields([
        ["description", agent.description],
        ["registered", time(agent.created_at)],
        ["by", agent.created_by],
        ["environment", status.environment],
      ]),
      status.certificates.length === 0
        ? h("p", { class: "muted" }, "No certificate yet: this agent may hold observe authority only.")
        : h(
            "table",
            { class: "certificates cards" },
            h(
              "thead",
              {},
              h(
                "tr",
                {},
                ["certificate", "status", "environment", "issued by", "issued", "basis", "revoked", ""].map((t) => h("th", {}, t)),
              ),
            ),
            h(
              "tbody",
              {},
              status.certificates.map((c) => certificateRow(c, ctx, reload)),
            ),
          ),
      ctx.caps.can("post", "/agents/{}/certification")
        ? h(
            "details",
            { class: "certify-panel" },
            h("summary", {}, status.certified ? "Certify again (supersedes the valid certificate)" : "Certify"),
            certifyForm(agent, reload),
          )
        : null,
    );
  };
  await reload();
  return card;
}

/**
 * @param {HTMLElement} section
 * @param {ViewContext} ctx
 */
export async function agentsView(section, ctx) {
  if (!ctx.caps.can("get", "/agents")) {
    section.append(message("notice", "Your roles do not include reading agents."));
    return;
  }
  /** @type {import("./api.js").AgentList} */
  const { agents } = await api("GET", "/agents?limit=100");
  if (agents.length === 0) section.append(h("p", { class: "muted" }, "No agent is registered."));
  const cards = await Promise.all(agents.map((agent) => agentCard(agent, ctx)));
  section.append(...cards);
}
