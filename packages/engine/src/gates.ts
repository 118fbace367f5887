// The gates that need no policy: grant, status, window, audience, certification, scope, conditions, budget.

import { toolCovered } from "@agent-authority/lattice";
import { remainingMinor } from "./usage.js";
import type { ChainLink, DecisionRequest, DecisionState } from "./types.js";
import { fail, pass, skip, type Verdict } from "./verdict.js";

/** `grant ... ` or `its ancestor grant ...`: names the link a reason is about. */
export function describeLink(chain: readonly ChainLink[], index: number): string {
  const id = `\`${chain[index]!.grant_id}\``;
  return index === chain.length - 1 ? `grant ${id}` : `ancestor grant ${id}`;
}

function iso(ms: number): string {
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? `\`${new Date(ms).toISOString()}\`` : `\`${ms}\``;
}

/** Gate 1: the grant exists and the calling agent holds it; unknown and foreign grants read the same. */
export function grantGate(request: DecisionRequest, chain: readonly ChainLink[]): Verdict {
  const leaf = chain[chain.length - 1];
  if (leaf === undefined || leaf.grant_id !== request.grant_id || leaf.agent_id !== request.agent_id) {
    return fail("deny", "grant.not_held", `agent \`${request.agent_id}\` holds no grant \`${request.grant_id}\``);
  }
  return pass("grant.held", `agent \`${request.agent_id}\` holds grant \`${leaf.grant_id}\``);
}

/** Gate 2: every link is active; a revocation anywhere decides before a pending approval. */
export function statusGate(chain: readonly ChainLink[]): Verdict {
  const revoked = chain.findIndex((link) => link.status === "revoked");
  if (revoked >= 0) {
    return fail("deny", "status.revoked", `${describeLink(chain, revoked)} has been revoked; ask its issuer for a new grant`, {
      grant_id: chain[revoked]!.grant_id,
    });
  }
  const pending = chain.findIndex((link) => link.status === "pending_approval");
  if (pending >= 0) {
    return fail("gated", "status.pending_approval", `${describeLink(chain, pending)} awaits a human's approval before it can be used`, {
      grant_id: chain[pending]!.grant_id,
    });
  }
  return pass("status.active", "the grant and every ancestor are active");
}

/** Gate 3: now lies inside every window (start ≤ now < end). */
export function windowGate(chain: readonly ChainLink[], now: number): Verdict {
  for (let i = 0; i < chain.length; i += 1) {
    const { start, end } = chain[i]!.terms.window;
    if (now < start)
      return fail("deny", "window.not_yet_valid", `${describeLink(chain, i)} is valid from ${iso(start)}`, {
        grant_id: chain[i]!.grant_id,
      });
    if (now >= end)
      return fail("deny", "window.expired", `${describeLink(chain, i)} expired at ${iso(end)}`, { grant_id: chain[i]!.grant_id });
  }
  return pass("window.inside", "now lies inside the window of the grant and every ancestor");
}

/**
 * Gate 4: the request's audience equals the audience of every link. As in the lattice, audiences
 * compare by equality: a grant that names no audience serves only requests that name none.
 */
export function audienceGate(request: DecisionRequest, chain: readonly ChainLink[]): Verdict {
  const asked = request.audience ?? null;
  for (let i = 0; i < chain.length; i += 1) {
    const audience = chain[i]!.terms.audience;
    if (audience === asked) continue;
    if (asked === null) {
      return fail("deny", "audience.missing", `${describeLink(chain, i)} is for audience \`${audience}\`; name it in the request`, {
        grant_id: chain[i]!.grant_id,
      });
    }
    const expected = audience === null ? "no audience" : `audience \`${audience}\``;
    return fail("deny", "audience.mismatch", `${describeLink(chain, i)} is for ${expected}, not \`${asked}\``, {
      grant_id: chain[i]!.grant_id,
    });
  }
  return pass(
    "audience.match",
    asked === null ? "neither the request nor the chain names an audience" : `the chain is for audience \`${asked}\``,
  );
}

const ATTESTED_FIELDS = ["manifest_hash", "content_hash", "provenance_version"] as const;

/** Gate 5: in `enforce`, a valid certificate here and an attestation equal to the certified one. */
export function certificationGate(request: DecisionRequest, state: DecisionState, enforcing: boolean): Verdict {
  if (!enforcing) {
    return skip("certification.not_required", "the grant is in `observe`, where certification is not required");
  }
  const cert = state.certificate;
  if (cert === null || cert.agent_id !== request.agent_id || cert.environment !== state.environment) {
    return fail(
      "deny",
      "certification.missing",
      `agent \`${request.agent_id}\` holds no certificate for environment \`${state.environment}\`; a certifier must certify it`,
    );
  }
  if (cert.revoked_at !== null) {
    return fail(
      "deny",
      "certification.revoked",
      `the certificate \`${cert.certificate_id}\` of agent \`${request.agent_id}\` was revoked at ${iso(cert.revoked_at)}`,
    );
  }
  const presented = request.attestation ?? null;
  if (presented === null) {
    return fail(
      "deny",
      "certification.attestation_missing",
      "the request presents no attestation; send `manifest_hash`, `content_hash` and `provenance_version`",
    );
  }
  const differing = ATTESTED_FIELDS.filter((field) => presented[field] !== cert[field]);
  if (differing.length > 0) {
    const list = differing.map((f) => `\`${f}\``).join(", ");
    return fail(
      "deny",
      "certification.attestation_mismatch",
      `the attestation differs from certificate \`${cert.certificate_id}\` on ${list}; the changed agent must be certified again`,
    );
  }
  return pass("certification.valid", `certificate \`${cert.certificate_id}\` is valid here and the attestation matches it`);
}

/** The names a scope entry can name; a tool outside them is covered by no grant, whatever its prefix. */
const NAMEABLE_TOOL = /^[A-Za-z0-9_.:*-]+$/;

/** Gate 6: every link's scope covers the tool, and the tool is a name a scope can hold. */
export function scopeGate(request: DecisionRequest, chain: readonly ChainLink[]): Verdict {
  if (!NAMEABLE_TOOL.test(request.tool))
    return fail(
      "deny",
      "scope.out_of_scope",
      `tool ${JSON.stringify(request.tool)} is not a name a scope can hold (\`A-Z a-z 0-9 _ . : * -\` only), so no grant covers it`,
    );
  for (let i = 0; i < chain.length; i += 1) {
    if (!toolCovered(request.tool, chain[i]!.terms.scope.tool)) {
      const scope = chain[i]!.terms.scope.tool.map((t) => `\`${t}\``).join(", ") || "no tool";
      return fail("deny", "scope.out_of_scope", `tool \`${request.tool}\` is not in the scope of ${describeLink(chain, i)} (${scope})`, {
        grant_id: chain[i]!.grant_id,
      });
    }
  }
  return pass("scope.covered", `tool \`${request.tool}\` is in scope on the whole chain`);
}

/** Gate 7: the conditions of every link hold. */
export function conditionsGate(request: DecisionRequest, chain: readonly ChainLink[]): Verdict {
  for (let i = 0; i < chain.length; i += 1) {
    if (chain[i]!.terms.conditions.clean_context && request.context?.clean !== true) {
      return fail(
        "deny",
        "conditions.clean_context_required",
        `${describeLink(chain, i)} requires a clean context; send \`context.clean: true\` only from a clean context`,
        { grant_id: chain[i]!.grant_id },
      );
    }
  }
  return pass("conditions.met", "every condition of the chain holds");
}

/** The amount a request spends: 0 when absent. */
export function requestAmount(request: DecisionRequest): number {
  return request.amount_minor ?? 0;
}

/**
 * Gate 9: the amount and one more use fit on every link; currencies must match when spending.
 *
 * INVARIANT (budget-monotone): an action is allowed only when it fits what is left of every grant
 * of its chain, and an allowed action debits every one of them (`Decision.holds`, one use each) in
 * one step of the store. So no subtree ever spends more than its root, however many children share
 * it; `test/engine/chain-spend.prop.test.ts` checks it under every interleaving.
 */
export function budgetGate(request: DecisionRequest, chain: readonly ChainLink[], now: number): Verdict {
  const amount = requestAmount(request);
  if (!Number.isSafeInteger(amount) || amount < 0) {
    return fail("deny", "budget.invalid_amount", `the amount \`${String(amount)}\` is not a non-negative integer in minor units`);
  }
  if (amount > 0) {
    for (let i = 0; i < chain.length; i += 1) {
      const currency = chain[i]!.terms.budget_currency;
      if ((request.currency ?? null) !== currency) {
        const asked = request.currency == null ? "no currency" : `\`${request.currency}\``;
        return fail(
          "deny",
          "budget.currency_mismatch",
          `${describeLink(chain, i)} budgets in \`${currency ?? "none"}\` and the request names ${asked}`,
          { grant_id: chain[i]!.grant_id },
        );
      }
    }
  }
  for (let i = 0; i < chain.length; i += 1) {
    const link = chain[i]!;
    const remaining = Math.max(0, remainingMinor(link, now));
    if (amount > remaining) {
      return fail(
        "exhausted",
        "budget.amount_exhausted",
        `${describeLink(chain, i)} has \`${remaining}\` left of its amount budget and the action needs \`${amount}\``,
        { grant_id: link.grant_id },
      );
    }
    const count = link.terms.budget_count;
    if (count !== null && link.usage.uses >= count) {
      return fail("exhausted", "budget.count_exhausted", `${describeLink(chain, i)} has used all \`${count}\` of its uses`, {
        grant_id: link.grant_id,
      });
    }
  }
  return pass(
    "budget.fits",
    amount > 0 ? `\`${amount}\` and one more use fit on the grant and every ancestor` : "one more use fits on the grant and every ancestor",
  );
}
