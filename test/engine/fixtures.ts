// Chains, requests and state for the engine's tests.
import type { CertificateState, ChainLink, DecisionRequest, DecisionState } from "@agent-authority/engine";
import type { GrantTerms } from "@agent-authority/lattice";
import { HOUR, PARENT, T0 } from "../lattice/fixtures.js";

export { HOUR, T0 };
export const NOW = T0 + 2 * HOUR;

export const ROOT_TERMS: GrantTerms = { ...PARENT, policy: null };

export function link(grant_id: string, agent_id: string, terms: Partial<GrantTerms> = {}, extra: Partial<ChainLink> = {}): ChainLink {
  return {
    grant_id,
    agent_id,
    status: "active",
    terms: { ...ROOT_TERMS, ...terms },
    usage: { uses: 0, settled_minor: 0, holds: [] },
    ...extra,
  };
}

/** A root held by `agt_root` and a child held by `agt_child`, both in `enforce`. */
export function chainOf(rootTerms: Partial<GrantTerms> = {}, childTerms: Partial<GrantTerms> = {}): ChainLink[] {
  return [link("grt_root", "agt_root", rootTerms), link("grt_child", "agt_child", { delegation_depth_max: 1, ...childTerms })];
}

export const ATTESTATION = { manifest_hash: "sha256:m1", content_hash: "sha256:c1", provenance_version: "model-2026-01" };

export function certificate(agent_id = "agt_child", overrides: Partial<CertificateState> = {}): CertificateState {
  return { certificate_id: "crt_1", agent_id, environment: "production", revoked_at: null, ...ATTESTATION, ...overrides };
}

export function stateFor(agent_id = "agt_child", overrides: Partial<DecisionState> = {}): DecisionState {
  return { environment: "production", certificate: certificate(agent_id), ...overrides };
}

export function request(overrides: Partial<DecisionRequest> = {}): DecisionRequest {
  return {
    grant_id: "grt_child",
    agent_id: "agt_child",
    tool: "payments.send",
    amount_minor: 1_000,
    currency: "EUR",
    audience: "api.example.com",
    args: {},
    context: { clean: true },
    attestation: ATTESTATION,
    ...overrides,
  };
}
