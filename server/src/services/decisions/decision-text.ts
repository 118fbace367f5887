// The texts of a decision: the fields every answer about one shares, the answer of
// `POST /v1/authorize` as sent, and the statement its signature vouches for. Pure functions.

import { hash } from "node:crypto";
import type { AuthorizeBody } from "@agent-authority/api";
import type { CertificateRecord } from "../../store/core/index.js";
import type { Decision, DecisionState } from "@agent-authority/engine";
import { canonicalJson, canonicalMerge, CanonicalText } from "../seal/index.js";
import { iso } from "../common/index.js";

/** What the engine knows of the server for a decision: its environment and the agent's valid certificate. */
export function decisionState(environment: string, certificate: CertificateRecord | undefined): DecisionState {
  return {
    environment,
    certificate:
      certificate === undefined
        ? null
        : {
            certificate_id: certificate.id,
            agent_id: certificate.agent_id,
            environment: certificate.environment,
            revoked_at: certificate.revoked_at,
            manifest_hash: certificate.manifest_hash,
            content_hash: certificate.content_hash,
            provenance_version: certificate.provenance_version,
          },
  };
}

/** The fields every answer about a decision shares before its gates, in API order. */
function outcomeHead(decision: Decision) {
  return {
    outcome: decision.outcome,
    ...(decision.would_outcome === undefined ? {} : { would_outcome: decision.would_outcome }),
    enforcement_mode: decision.mode,
    decided_by: decision.decided_by,
    reason_code: decision.reason_code,
    reason: decision.reason,
  };
}

/** The fields every answer about a decision shares after its gates, in API order. */
function outcomeTail(decision: Decision) {
  return {
    ...(decision.residual === undefined ? {} : { residual: decision.residual }),
    approver: decision.approver,
  };
}

/** The fields every answer about a decision shares, sealed (authorize) or not (preview), in API order. */
export function decisionOutcomeFields(decision: Decision) {
  return { ...outcomeHead(decision), gates: decision.gates, ...outcomeTail(decision) };
}

/** A member of a JSON object after a comma, as `JSON.stringify` writes it, its `name` given quoted; nothing for an undefined value, which it leaves out. */
function member(name: string, value: unknown): string {
  return value === undefined ? "" : `,${name}:${JSON.stringify(value)}`;
}

/**
 * The answer of `POST /v1/authorize` as sent: `ledger_id`, the fields every answer about a decision
 * shares, then `approval_id`, `holds`, `decided_at` and `signature`, in that order, byte for byte
 * what `JSON.stringify` writes for the answer's value. It is written member by member, so that the
 * gates go in as their text (`gateTexts(decision.gates).answer`) instead of being serialised again,
 * and the signature as the text `Signer.signAnswerTexts` wrote of its member.
 */
export function decisionAnswerText(ledgerId: string, decision: Decision, now: number, gates: string, signature?: string): string {
  return (
    `{"ledger_id":${JSON.stringify(ledgerId)}` +
    member('"outcome"', decision.outcome) +
    member('"would_outcome"', decision.would_outcome) +
    member('"enforcement_mode"', decision.mode) +
    member('"decided_by"', decision.decided_by) +
    member('"reason_code"', decision.reason_code) +
    member('"reason"', decision.reason) +
    `,"gates":${gates}` +
    member('"residual"', decision.residual) +
    member('"approver"', decision.approver) +
    member('"approval_id"', decision.approval_id) +
    member(
      '"holds"',
      decision.holds.map((h) => ({
        grant_id: h.grant_id,
        amount_minor: h.amount_minor,
        currency: h.currency,
        expires_at: iso(h.expires_at),
      })),
    ) +
    member('"decided_at"', iso(now)) +
    (signature === undefined ? "" : `,"signature":${signature}`) +
    "}"
  );
}

/**
 * What a decision's signature vouches for (docs/verification.md), its members in canonical order
 * (RFC 8785) so that the signer serialises it as it is. The args are bound by the hash of their
 * canonical JSON, `argsText`: the sealed record's request is written with the same text
 * (`requestText`). The nonce is the client's own, so that an old answer cannot pass for a new one.
 */
export function decisionStatement(
  ledgerId: string,
  outcome: string,
  agentId: string,
  body: AuthorizeBody,
  now: number,
  argsText: string | undefined = argsCanonicalText(body),
) {
  return {
    agent_id: agentId,
    amount_minor: body.amount_minor ?? null,
    args_sha256: argsText === undefined ? null : hash("sha256", argsText, "hex"),
    currency: body.currency ?? null,
    decided_at: iso(now),
    grant_id: body.grant_id,
    ledger_id: ledgerId,
    nonce: body.nonce ?? null,
    outcome,
    tool: body.tool,
    type: "authority.decision.v1",
  };
}

/** The canonical JSON of a request's args; undefined when it has none. */
export function argsCanonicalText(body: AuthorizeBody): string | undefined {
  return body.args === undefined ? undefined : canonicalJson(body.args);
}

/**
 * The request as the sealed record keeps it, `canonicalJson(body)`, written with its args' canonical
 * text as given (the one the statement hashes) rather than serialising the args again.
 */
export function requestText(body: AuthorizeBody, argsText: string | undefined): CanonicalText {
  const request = body as unknown as Readonly<Record<string, unknown>>;
  return new CanonicalText(canonicalMerge(request, argsText === undefined ? {} : { args: new CanonicalText(argsText) }));
}
