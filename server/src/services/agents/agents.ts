// Agents: registered idempotently by name; certification decides what authority they may hold.

import type { Agent, AgentCreateBody, Certificate, CertificationBody, CertificationStatus } from "@agent-authority/api";
import { Refusal } from "../common/index.js";
import { newId } from "../../ids.js";
import type { AgentRecord, CertificateRecord, Page, Store } from "../../store/core/index.js";
import { confinedToAgent, type Caller, type ServiceContext } from "../common/index.js";
import { emitEvent } from "../events/index.js";
import { agentView, certificateView } from "../common/index.js";

export async function createAgent(ctx: ServiceContext, caller: Caller, body: AgentCreateBody): Promise<{ agent: Agent; created: boolean }> {
  const now = ctx.now();
  const { agent, created } = await ctx.store.createAgentIfAbsent({
    id: newId("agt", now),
    name: body.name,
    description: body.description ?? null,
    created_at: now,
    created_by: caller.identity,
  });
  return { agent: agentView(agent), created };
}

/** The agent, or 404; an agent key sees only its own agent (others do not exist for it). */
export async function visibleAgent(store: Store, caller: Caller, id: string): Promise<AgentRecord> {
  const confined = confinedToAgent(caller);
  const agent = confined !== null && confined !== id ? undefined : await store.getAgent(id);
  if (agent === undefined) throw new Refusal("agent_not_found", `no agent \`${id}\``);
  return agent;
}

export async function listAgents(ctx: ServiceContext, page: Page): Promise<{ agents: Agent[]; next_after: string | null }> {
  const records = await ctx.store.listAgents(page);
  return { agents: records.map(agentView), next_after: records.length === page.limit ? records[records.length - 1]!.id : null };
}

/**
 * Certifies an agent. `issued_by` and `issued_by_email` come from the authenticated human (the
 * endpoint refuses service keys); a new certificate supersedes the valid one of the same
 * environment, which is revoked by field in the same transaction.
 */
export async function certifyAgent(ctx: ServiceContext, caller: Caller, agentId: string, body: CertificationBody): Promise<Certificate> {
  if (caller.kind !== "human") throw new Refusal("human_required", "certification needs a human key");
  return ctx.store.transaction(async (tx) => {
    // Certifications of one agent are serialised, so that each supersedes exactly the one before.
    await tx.lockAgent(agentId);
    if ((await tx.getAgent(agentId)) === undefined) throw new Refusal("agent_not_found", `no agent \`${agentId}\``);
    const now = ctx.now();
    const environment = body.environment ?? ctx.environment;
    const certificate: CertificateRecord = {
      id: newId("crt", now),
      agent_id: agentId,
      environment,
      issued_by: caller.identity,
      issued_by_email: caller.email,
      issued_at: now,
      basis: body.basis,
      provenance_version: body.provenance_version,
      manifest_hash: body.manifest_hash,
      content_hash: body.content_hash,
      market_profile: body.market_profile ?? null,
      checks: [...body.checks],
      revoked_at: null,
      revoked_by: null,
      revocation_reason: null,
      superseded_by: null,
    };
    const previous = await tx.validCertificate(agentId, environment);
    if (previous !== undefined) {
      const reason = `superseded by ${certificate.id}`;
      await tx.revokeCertificate(previous.id, { at: now, by: caller.identity, reason }, certificate.id);
      await emitEvent(tx, "certificate.revoked", {
        subject: previous.id,
        agentId,
        at: now,
        data: {
          certificate_id: previous.id,
          agent_id: agentId,
          environment,
          revoked_by: caller.identity,
          reason,
          superseded_by: certificate.id,
        },
      });
    }
    await tx.insertCertificate(certificate);
    await emitEvent(tx, "certificate.issued", {
      subject: certificate.id,
      agentId,
      at: now,
      data: {
        certificate_id: certificate.id,
        agent_id: agentId,
        environment,
        issued_by: caller.identity,
        supersedes: previous?.id ?? null,
      },
    });
    return certificateView(certificate);
  });
}

export async function certificationStatus(ctx: ServiceContext, caller: Caller, agentId: string): Promise<CertificationStatus> {
  await visibleAgent(ctx.store, caller, agentId);
  const all = await ctx.store.listCertificates({ agent_id: agentId }, { limit: 1_000 });
  const valid = all.find((c) => c.environment === ctx.environment && c.revoked_at === null);
  return {
    agent_id: agentId,
    environment: ctx.environment,
    certified: valid !== undefined,
    certificate: valid === undefined ? null : certificateView(valid),
    certificates: all.reverse().map(certificateView),
  };
}

export async function listCertificates(
  ctx: ServiceContext,
  filter: { agent_id?: string | undefined; environment?: string | undefined },
  page: Page,
): Promise<{ certificates: Certificate[]; next_after: string | null }> {
  const records = await ctx.store.listCertificates(filter, page);
  return { certificates: records.map(certificateView), next_after: records.length === page.limit ? records[records.length - 1]!.id : null };
}

export async function revokeCertificate(ctx: ServiceContext, caller: Caller, id: string, reason: string | undefined): Promise<Certificate> {
  return ctx.store.transaction(async (tx) => {
    const certificate = await tx.getCertificate(id);
    if (certificate === undefined) throw new Refusal("certificate_not_found", `no certificate \`${id}\``);
    if (certificate.revoked_at !== null) throw new Refusal("certificate_already_revoked");
    const now = ctx.now();
    await tx.revokeCertificate(id, { at: now, by: caller.identity, reason: reason ?? null });
    await emitEvent(tx, "certificate.revoked", {
      subject: id,
      agentId: certificate.agent_id,
      at: now,
      data: {
        certificate_id: id,
        agent_id: certificate.agent_id,
        environment: certificate.environment,
        revoked_by: caller.identity,
        reason: reason ?? null,
        superseded_by: null,
      },
    });
    return certificateView((await tx.getCertificate(id))!);
  });
}

/**
 * INVARIANT (certified-to-refuse): authority in a mode that refuses goes only to an agent with a
 * valid certificate for this server's environment. Every path that issues, delegates or escalates
 * authority calls this with the mode the result would have (docs/security.md, rule 3).
 */
export async function requireCertificationFor(
  store: Store,
  environment: string,
  agentId: string,
  mode: "observe" | "enforce",
): Promise<void> {
  if (mode === "observe") return;
  if ((await store.validCertificate(agentId, environment)) !== undefined) return;
  throw new Refusal(
    "certification_required",
    `agent \`${agentId}\` holds no valid certificate for environment \`${environment}\`; certify it, or use \`enforcement_mode: "observe"\``,
    { agent_id: agentId, environment },
  );
}
