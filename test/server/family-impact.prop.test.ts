// The impact preview answers what `enforce` would decide, whatever mode the candidate runs in: over
// random ledgers (certified, uncertified, forged and later-revoked agents; settlements; delegated
// children; approvals) the preview of a candidate in `observe`, the preview of the same candidate in
// `enforce`, and a real `enforce` replay of the same requests all agree. Real server, SQLite and
// PostgreSQL.

import { compileFamily, type GrantFamilyBody } from "@agent-authority/families";
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { CERTIFICATION, startTestServer, type TestServer } from "./http-harness.js";
import { forEachStore, type StoreTarget } from "./targets.js";

const ATTESTATION = {
  manifest_hash: CERTIFICATION.manifest_hash,
  content_hash: CERTIFICATION.content_hash,
  provenance_version: CERTIFICATION.provenance_version,
};
const FORGED = { ...ATTESTATION, content_hash: `sha256:${"f".repeat(64)}` };
const APPROVER = "approver@example.com";

/** A payment family; `mode` fixes the grants' mode (else the `mode` parameter decides), `budget` varies. */
function family(name: string, version: number, budget: number, mode?: "observe" | "enforce"): GrantFamilyBody {
  const yaml = `
id: ${name}
version: ${version}
reviewed_by: [reviewer@example.com]
parameters:
  agent_id: {type: string, pattern: "agt_[0-9a-hjkmnp-tv-z]{26}", example: agt_nwj47tan9zt24mnpzx45hy43kw}
  mode: {type: string, enum: [observe, enforce], default: enforce}
grant:
  agent_id: \${agent_id}
  principal_type: team
  principal_id: payments
  scope: {tool: [payments.send]}
  budget_amount_minor: ${budget}
  budget_currency: EUR
  delegation_policy: attenuating
  enforcement_mode: ${mode ?? "${mode}"}
  policy: 'amount_minor <= 2500 || approver in ["${APPROVER}"]'
examples:
  - name: a small payment is allowed
    action: {tool: payments.send, amount_minor: 500, currency: EUR}
    expect: allow
`;
  const compiled = compileFamily(yaml, `${name}.yaml`);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics));
  return compiled.body!;
}

type Standing = "certified" | "uncertified" | "revoked_later";
interface AgentPlan {
  readonly standing: Standing;
  readonly enforceOriginal: boolean;
  readonly child: boolean;
}
type Step =
  | {
      readonly kind: "pay";
      readonly who: number;
      readonly viaChild: boolean;
      readonly amount: number;
      readonly attest: "valid" | "forged" | "none";
      readonly settle: number | null;
    }
  | { readonly kind: "revoke"; readonly who: number };

const agentPlan: fc.Arbitrary<AgentPlan> = fc.record({
  standing: fc.constantFrom<Standing>("certified", "uncertified", "revoked_later"),
  enforceOriginal: fc.boolean(),
  child: fc.boolean(),
});
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("pay" as const),
      who: fc.nat({ max: 3 }),
      viaChild: fc.boolean(),
      amount: fc.integer({ min: 1, max: 35 }).map((n) => n * 100),
      attest: fc.constantFrom("valid" as const, "valid" as const, "forged" as const, "none" as const),
      settle: fc.option(fc.integer({ min: 0, max: 100 }), { nil: null }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("revoke" as const), who: fc.nat({ max: 3 }) }) },
);

interface Decided {
  readonly ledger_id: string;
  readonly outcome: string;
  readonly would_outcome?: string;
  readonly reason_code: string;
  readonly decided_by: string | null;
}
interface Change {
  readonly ledger_id: string;
  readonly before: { outcome: string };
  readonly after: { outcome: string; reason_code: string; mode: string; answer: string };
}
interface Preview {
  readonly replayed: number;
  readonly changed: number;
  readonly changes: readonly Change[];
  readonly candidate_modes: readonly Record<string, unknown>[];
}

/** The outcome a preview predicts for each sealed decision: the changed one, else the one sealed. */
function predicted(preview: Preview, sealed: readonly Decided[]): string[] {
  return sealed.map((d) => preview.changes.find((c) => c.ledger_id === d.ledger_id)?.after.outcome ?? d.would_outcome ?? d.outcome);
}

function impactSuite(target: StoreTarget): void {
  let t: TestServer;
  let issuer: string;
  let certifier: string;
  let auditor: string;
  let approver: string;
  beforeAll(async () => {
    t = await startTestServer(target);
    issuer = await t.key("issuer@example.com", ["issuer"]);
    certifier = await t.key("certifier@example.com", ["certifier"]);
    auditor = await t.key("auditor@example.com", ["auditor"]);
    approver = await t.key(APPROVER, ["approver"]);
  });
  afterAll(async () => {
    await t?.close();
  });

  let run = 0;

  /** Pushes a family version and answers its id. */
  async function push(body: GrantFamilyBody): Promise<string> {
    const pushed = await t.call("POST", "/grant-families", { key: issuer, body });
    expect(pushed.status, JSON.stringify(pushed.body)).toBeLessThan(300);
    return pushed.body.id as string;
  }

  async function instantiate(familyId: string, parameters: Record<string, unknown>): Promise<string> {
    const grant = await t.call("POST", `/grant-families/${familyId}/instantiate`, { key: issuer, body: { parameters } });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
    return grant.body.id as string;
  }

  async function delegate(grantId: string, agentId: string): Promise<string> {
    const child = await t.call("POST", `/grants/${grantId}/delegate`, {
      key: issuer,
      body: { agent_id: agentId, budget_amount_minor: 3000 },
    });
    expect(child.status, JSON.stringify(child.body)).toBe(201);
    return child.body.id as string;
  }

  async function certify(agentId: string): Promise<string> {
    const reply = await t.call("POST", `/agents/${agentId}/certification`, { key: certifier, body: CERTIFICATION });
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    return reply.body.id as string;
  }

  async function revoke(certificateId: string): Promise<void> {
    expect((await t.call("POST", `/certificates/${certificateId}/revoke`, { key: certifier, body: { reason: "withdrawn" } })).status).toBe(
      200,
    );
  }

  /** One timeline's grants of an agent: the root and, when planned, a delegated child. */
  interface Grants {
    root: string;
    child: string | null;
  }
  interface Agent {
    id: string;
    key: string;
    plan: AgentPlan;
    certificate: string | null;
    original: Grants;
    real: Grants;
  }

  /**
   * The agent, its grant of the current version (the original timeline) and its grant of the
   * candidate in `enforce` (the real replay). An uncertified agent gets its original grant while it
   * holds no certificate; its enforce grant can only be issued under one, which is revoked at once,
   * so that it holds no valid certificate at any decision of either timeline.
   */
  async function setUpAgent(plan: AgentPlan, currentId: string, realId: string): Promise<Agent> {
    run += 1;
    const created = await t.call("POST", "/agents", { key: issuer, body: { name: `impact-prop-agent-${target.name}-${run}` } });
    const id = created.body.id as string;
    const key = await t.key(`impact-prop-key-${id}`, ["agent"], { kind: "service", agent_id: id });
    const enforceOriginal = plan.enforceOriginal && plan.standing !== "uncertified";
    let certificate = plan.standing === "uncertified" ? null : await certify(id);
    const originalRoot = await instantiate(currentId, { agent_id: id, mode: enforceOriginal ? "enforce" : "observe" });
    if (certificate === null) certificate = await certify(id);
    const realRoot = await instantiate(realId, { agent_id: id });
    const original = { root: originalRoot, child: plan.child ? await delegate(originalRoot, id) : null };
    const real = { root: realRoot, child: plan.child ? await delegate(realRoot, id) : null };
    if (plan.standing === "uncertified") {
      await revoke(certificate);
      certificate = null;
    }
    return { id, key, plan: { ...plan, enforceOriginal }, certificate, original, real };
  }

  /**
   * One payment on one timeline: a decision, an approval and retry when the policy gated it and
   * the original timeline asked for one (`retry`), and the settlement `settleAt` when given.
   */
  async function pay(agent: Agent, grantId: string, s: Extract<Step, { kind: "pay" }>, retry: boolean): Promise<Decided[]> {
    const attestation = s.attest === "valid" ? { attestation: ATTESTATION } : s.attest === "forged" ? { attestation: FORGED } : {};
    const body = { grant_id: grantId, tool: "payments.send", amount_minor: s.amount, currency: "EUR", ...attestation };
    const first = await t.call("POST", "/authorize", { key: agent.key, body });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const decided: Decided[] = [first.body];
    if (retry) {
      const gated = first.body.outcome === "gated" && first.body.decided_by === "policy";
      const approval = gated ? await t.call("POST", `/decisions/${first.body.ledger_id}/approve`, { key: approver, body: {} }) : undefined;
      if (approval !== undefined) expect(approval.status, JSON.stringify(approval.body)).toBe(201);
      const again = await t.call("POST", "/authorize", {
        key: agent.key,
        body: { ...body, ...(approval === undefined ? {} : { approval_id: approval.body.approval_id }) },
      });
      decided.push(again.body);
    }
    return decided;
  }

  async function settle(agent: Agent, decision: Decided, amount: number): Promise<boolean> {
    const reply = await t.call("POST", `/decisions/${decision.ledger_id}/settle`, { key: agent.key, body: { amount_minor: amount } });
    return reply.status === 200;
  }

  it("predicts, for an observe and an enforce candidate alike, exactly what a real enforce replay of the same requests decides", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(agentPlan, { minLength: 1, maxLength: 4 }),
        fc.array(step, { minLength: 1, maxLength: 14 }),
        async (plans, steps) => {
          run += 1;
          const name = `impact-prop-${run}`;
          const currentId = await push(family(name, 1, 6000));
          const realId = await push(family(`${name}-real`, 1, 4500, "enforce"));
          const agents: Agent[] = [];
          for (const plan of plans) agents.push(await setUpAgent(plan, currentId, realId));
          const sealed: Decided[] = [];
          const real: Decided[] = [];
          // The agents whose grant trees have records: the grants a preview replays.
          const paid = new Set<string>();
          for (const s of steps) {
            const agent = agents[s.who % agents.length]!;
            if (s.kind === "revoke") {
              if (agent.plan.standing === "revoked_later" && agent.certificate !== null) {
                await revoke(agent.certificate);
                agent.certificate = null;
              }
              continue;
            }
            paid.add(agent.id);
            const viaChild = s.viaChild && agent.original.child !== null;
            // Only an enforce decision can be approved; the real replay asks for the same approvals.
            const original = await pay(agent, viaChild ? agent.original.child! : agent.original.root, s, agent.plan.enforceOriginal);
            const replayed = await pay(agent, viaChild ? agent.real.child! : agent.real.root, s, agent.plan.enforceOriginal);
            sealed.push(...original);
            real.push(...replayed);
            const last = original.length - 1;
            // A settlement the original ledger sealed is sent to the real replay as well.
            if (s.settle !== null && original[last]!.outcome === "allow") {
              const amount = Math.floor((s.amount * s.settle) / 100);
              if (await settle(agent, original[last]!, amount)) await settle(agent, replayed[last]!, amount);
            }
          }
          const ask = async (mode: "observe" | "enforce"): Promise<Preview> => {
            const reply = await t.call("POST", `/grant-families/${currentId}/impact`, {
              key: auditor,
              body: { family: family(name, 2, 4500, mode), days: 1 },
            });
            expect(reply.status, JSON.stringify(reply.body)).toBe(200);
            return reply.body as Preview;
          };
          const observe = await ask("observe");
          const enforce = await ask("enforce");
          // Both previews answer what enforce would decide: the same changes, outcome for outcome.
          const enforceView = (p: Preview) => p.changes.map((c) => ({ ...c, after: { ...c.after, mode: undefined, answer: undefined } }));
          expect(enforceView(observe)).toEqual(enforceView(enforce));
          expect([observe.replayed, observe.changed]).toEqual([sealed.length, enforce.changed]);
          expect(enforce.replayed).toBe(sealed.length);
          // And that is what the real enforce replay decided, request for request.
          expect(predicted(enforce, sealed)).toEqual(real.map((d) => d.outcome));
          for (const change of enforce.changes) {
            const index = sealed.findIndex((d) => d.ledger_id === change.ledger_id);
            expect(change.after.reason_code).toBe(real[index]!.reason_code);
          }
          // Each says which mode the candidate runs in and what that mode answers: observe refuses nothing here.
          const refusals = real.filter((d) => d.outcome !== "allow").length;
          // A mode is listed once some grant replayed runs in it: none when nothing was decided.
          const listed = (summary: Record<string, unknown>) => (paid.size === 0 ? [] : [summary]);
          expect(observe.candidate_modes).toEqual(
            listed({ mode: "observe", grants: paid.size, replayed: sealed.length, enforce_refusals: refusals, refusals: 0 }),
          );
          expect(enforce.candidate_modes).toEqual(
            listed({ mode: "enforce", grants: paid.size, replayed: sealed.length, enforce_refusals: refusals, refusals }),
          );
          expect(observe.changes.every((c) => c.after.mode === "observe" && c.after.answer === "allow")).toBe(true);
          expect(enforce.changes.every((c) => c.after.mode === "enforce" && c.after.answer === c.after.outcome)).toBe(true);
        },
      ),
      { numRuns: 12 },
    );
  }, 600_000);
}

forEachStore("the impact preview against a real enforce replay", impactSuite);
