// Grant families over HTTP against a real server: push and versions, list and read, instantiation
// through the issue path (bounds, certification, the version a grant keeps), and the impact preview.

import { compileFamily, familyContentHash, type GrantFamilyBody } from "@agent-authority/families";
import { sealRecord } from "@agent-authority/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { stringify } from "yaml";
import { IMPACT_CERTIFICATES_PER_AGENT_MAX } from "../../server/src/services/families/index.js";
import { CERTIFICATION, ENVIRONMENT, expectProblem, startTestServer, type TestServer } from "./http-harness.js";
import type { StoreTarget } from "./targets.js";
import type { Decision } from "@agent-authority/sdk";

const ATTESTATION = {
  manifest_hash: CERTIFICATION.manifest_hash,
  content_hash: CERTIFICATION.content_hash,
  provenance_version: CERTIFICATION.provenance_version,
};

/**
 * A small family: a payment agent with a per-payment limit; `policy`, `limitMax`, `budget` and a
 * fixed `mode` (in place of the parameter's) vary between versions, `name` between families.
 */
export function familyBody(
  version: number,
  options: { limitMax?: number; policy?: string; name?: string; budget?: number; mode?: string } = {},
): GrantFamilyBody {
  const name = options.name ?? "test-payments";
  const yaml = `
id: ${name}
version: ${version}
reviewed_by: [reviewer@example.com]
parameters:
  agent_id: {type: string, pattern: "agt_[0-9a-hjkmnp-tv-z]{26}", example: agt_nwj47tan9zt24mnpzx45hy43kw}
  limit_minor: {type: int, min: 0, max: ${options.limitMax ?? 5000}, default: 1000}
  mode: {type: string, enum: [observe, enforce], default: enforce}
grant:
  agent_id: \${agent_id}
  principal_type: team
  principal_id: payments
  scope: {tool: [payments.send]}
  budget_amount_minor: ${options.budget ?? 10000}
  budget_currency: EUR
  enforcement_mode: ${options.mode ?? "${mode}"}
  policy: ${options.policy ?? "amount_minor <= ${limit_minor}"}
examples:
  - name: a small payment is allowed
    action: {tool: payments.send, amount_minor: 500, currency: EUR}
    expect: allow
`;
  const compiled = compileFamily(yaml, `${name}.yaml`);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics));
  return compiled.body!;
}

export function familiesHttpSuite(target: StoreTarget): void {
  let t: TestServer;
  let issuer: string;
  let certifier: string;
  let auditor: string;
  beforeAll(async () => {
    t = await startTestServer(target);
    issuer = await t.key("issuer@example.com", ["issuer"]);
    certifier = await t.key("certifier@example.com", ["certifier"]);
    auditor = await t.key("auditor@example.com", ["auditor"]);
  });
  afterAll(async () => {
    await t?.close();
  });

  let n = 0;
  async function agent(certified: boolean): Promise<string> {
    n += 1;
    const reply = await t.call("POST", "/agents", { key: issuer, body: { name: `family-agent-${n}` } });
    expect(reply.status).toBe(201);
    if (certified)
      expect((await t.call("POST", `/agents/${reply.body.id}/certification`, { key: certifier, body: CERTIFICATION })).status).toBe(201);
    return reply.body.id as string;
  }

  let familyId: string;

  describe("push", () => {
    it("stores a family under a fam_ id with the hash the server recomputed", async () => {
      const body = familyBody(1);
      const reply = await t.call("POST", "/grant-families", { key: issuer, body });
      expect(reply.status, JSON.stringify(reply.body)).toBe(201);
      expect(reply.body).toMatchObject({
        name: "test-payments",
        version: 1,
        created: true,
        content_hash: familyContentHash(body as never),
        pushed_by: "issuer@example.com",
      });
      expect(reply.body.id).toMatch(/^fam_[0-9a-hjkmnp-tv-z]{26}$/);
      familyId = reply.body.id;
    });

    it("answers the same version for the same content, whatever its version number says", async () => {
      for (const body of [familyBody(1), familyBody(7)]) {
        const reply = await t.call("POST", "/grant-families", { key: issuer, body });
        expect(reply.status).toBe(200);
        expect(reply.body).toMatchObject({ id: familyId, version: 1, created: false });
      }
    });

    it("refuses changed content under a version that is not raised (409) and writes nothing", async () => {
      const before = await t.db.store.countRows();
      const reply = await t.call("POST", "/grant-families", { key: issuer, body: familyBody(1, { limitMax: 6000 }) });
      expectProblem(reply, 409, "family_version_conflict");
      expect(reply.body).toMatchObject({ family_id: familyId, latest_version: 1 });
      expect(await t.db.store.countRows()).toEqual(before);
    });

    it("makes a new version of the same family for changed content", async () => {
      const reply = await t.call("POST", "/grant-families", { key: issuer, body: familyBody(2, { limitMax: 6000 }) });
      expect(reply.status).toBe(201);
      expect(reply.body).toMatchObject({ id: familyId, version: 2, created: true });
      expect(reply.body.parameters.limit_minor.max).toBe(6000);
    });

    it("refuses a body whose stated hash is not its content's, and what the compiler refuses", async () => {
      const body = { ...familyBody(3, { limitMax: 7000 }), content_hash: `sha256:${"0".repeat(64)}` };
      expectProblem(await t.call("POST", "/grant-families", { key: issuer, body }), 422, "invalid_family");
      const unknownPlaceholder = { ...familyBody(3), grant: { ...familyBody(3).grant, principal_id: "${nobody}" } };
      const refused = await t.call("POST", "/grant-families", {
        key: issuer,
        body: { ...unknownPlaceholder, content_hash: familyContentHash(unknownPlaceholder as never) },
      });
      expectProblem(refused, 422, "invalid_family");
      expect(refused.body.diagnostics.map((d: { code: string }) => d.code)).toContain("placeholder-unknown");
      expectProblem(await t.call("POST", "/grant-families", { key: issuer, body: { ...familyBody(3), extra: 1 } }), 400, "unknown_field");
    });

    it("points `invalid_family` diagnostics into the text the client sent, for a push and for an impact candidate", async () => {
      const bad = { ...familyBody(3), grant: { ...familyBody(3).grant, principal_id: "${nobody}" } };
      const body = { ...bad, content_hash: familyContentHash(bad as never) };
      // Sent compact, on one line: the server's own pretty copy would put it many lines down.
      const raw = JSON.stringify(body);
      const at = raw.indexOf('"${nobody}"');
      const pushed = await t.call("POST", "/grant-families", { key: issuer, raw });
      expectProblem(pushed, 422, "invalid_family");
      const placeholder = pushed.body.diagnostics.find((d: { code: string }) => d.code === "placeholder-unknown");
      expect(placeholder).toMatchObject({ line: 1 });
      expect([at, at + 1, at + 2]).toContain(placeholder.column);
      // In an impact request the family is a member: positions count from the start of the whole body.
      const impactRaw = `{\n  "days": 7,\n  "family": ${raw}\n}`;
      const impact = await t.call("POST", `/grant-families/${familyId}/impact`, { key: auditor, raw: impactRaw });
      expectProblem(impact, 422, "invalid_family");
      const inImpact = impact.body.diagnostics.find((d: { code: string }) => d.code === "placeholder-unknown");
      expect(inImpact).toMatchObject({ line: 3, column: placeholder.column + '  "family": '.length });
    });

    it("lists the latest version of each family and reads any version", async () => {
      const list = await t.call("GET", "/grant-families", { key: auditor });
      expect(list.status).toBe(200);
      expect(list.body.families).toHaveLength(1);
      expect(list.body.families[0]).toMatchObject({ id: familyId, version: 2 });
      expect((await t.call("GET", "/grant-families?name=nothing-here", { key: auditor })).body.families).toEqual([]);
      expect((await t.call("GET", `/grant-families/${familyId}?version=1`, { key: auditor })).body).toMatchObject({ version: 1 });
      expect((await t.call("GET", `/grant-families/${familyId}`, { key: auditor })).body).toMatchObject({ version: 2 });
      // Reading one family lists its versions, newest first, whichever version is read; the list does not.
      expect((await t.call("GET", `/grant-families/${familyId}?version=1`, { key: auditor })).body.versions).toEqual([2, 1]);
      expect(list.body.families[0].versions).toBeUndefined();
      expectProblem(await t.call("GET", `/grant-families/${familyId}?version=9`, { key: auditor }), 404, "family_not_found");
      expectProblem(await t.call("GET", `/grant-families/${familyId}?version=x`, { key: auditor }), 400, "invalid_query");
      expectProblem(await t.call("GET", "/grant-families/support-agent", { key: auditor }), 400, "invalid_id");
    });
  });

  describe("instantiate", () => {
    it("issues a grant within the bounds that records its family and version, and keeps it", async () => {
      const agentId = await agent(true);
      const reply = await t.call("POST", `/grant-families/${familyId}/instantiate`, {
        key: issuer,
        body: { version: 1, parameters: { agent_id: agentId, limit_minor: 2000 } },
      });
      expect(reply.status, JSON.stringify(reply.body)).toBe(201);
      expect(reply.body).toMatchObject({
        agent_id: agentId,
        family_id: familyId,
        family_version: 1,
        status: "active",
        enforcement_mode: "enforce",
        policy: "amount_minor <= 2000",
      });
      const latest = await t.call("POST", `/grant-families/${familyId}/instantiate`, {
        key: issuer,
        body: { parameters: { agent_id: agentId } },
      });
      expect(latest.body.family_version).toBe(2);
      // A new version leaves the grants already issued on theirs.
      expect((await t.call("POST", "/grant-families", { key: issuer, body: familyBody(3, { limitMax: 4000 }) })).status).toBe(201);
      expect((await t.call("GET", `/grants/${reply.body.id}`, { key: issuer })).body.family_version).toBe(1);
    });

    it("refuses parameters out of bounds with 422, listing each parameter, and issues nothing", async () => {
      const before = await t.db.store.countRows();
      const reply = await t.call("POST", `/grant-families/${familyId}/instantiate`, {
        key: issuer,
        body: { parameters: { limit_minor: 9000, mode: "lenient", colour: "blue" } },
      });
      expectProblem(reply, 422, "family_parameters_invalid");
      const named = reply.body.problems.map((p: { parameter: string; code: string }) => `${p.parameter}:${p.code}`).sort();
      expect(named).toEqual([
        "agent_id:parameter-missing",
        "colour:parameter-unknown",
        "limit_minor:parameter-bounds",
        "mode:parameter-bounds",
      ]);
      expect(await t.db.store.countRows()).toEqual(before);
    });

    it("runs the certification check of the issue path: enforce for an uncertified agent is 403, observe is allowed", async () => {
      const agentId = await agent(false);
      const before = await t.db.store.countRows();
      const refused = await t.call("POST", `/grant-families/${familyId}/instantiate`, {
        key: issuer,
        body: { parameters: { agent_id: agentId } },
      });
      expectProblem(refused, 403, "certification_required");
      expect(await t.db.store.countRows()).toEqual(before);
      const observed = await t.call("POST", `/grant-families/${familyId}/instantiate`, {
        key: issuer,
        body: { parameters: { agent_id: agentId, mode: "observe" } },
      });
      expect(observed.status).toBe(201);
      expect(observed.body.enforcement_mode).toBe("observe");
    });

    it("answers 404 for an unknown family or version", async () => {
      expectProblem(
        await t.call("POST", "/grant-families/fam_0000000000000000000000000a/instantiate", { key: issuer, body: { parameters: {} } }),
        404,
        "family_not_found",
      );
      expectProblem(
        await t.call("POST", `/grant-families/${familyId}/instantiate`, { key: issuer, body: { version: 40, parameters: {} } }),
        404,
        "family_not_found",
      );
    });
  });

  describe("impact preview", () => {
    it("replays the sealed decisions of the family's grants under a candidate and reports what changes", async () => {
      const agentId = await agent(true);
      const agentKey = await t.key(`family-agent-key-${agentId}`, ["agent"], { kind: "service", agent_id: agentId });
      const grant = await t.call("POST", `/grant-families/${familyId}/instantiate`, {
        key: issuer,
        body: { parameters: { agent_id: agentId, limit_minor: 2000 } },
      });
      expect(grant.status).toBe(201);
      const pay = (amount: number) => ({
        grant_id: grant.body.id,
        tool: "payments.send",
        amount_minor: amount,
        currency: "EUR",
        attestation: ATTESTATION,
      });
      const decided: Decision[] = [];
      for (const amount of [500, 1500, 2500]) decided.push((await t.call("POST", "/authorize", { key: agentKey, body: pay(amount) })).body);
      expect(decided.map((d) => d.outcome)).toEqual(["allow", "allow", "deny"]);
      const before = await t.db.store.countRows();
      const candidate = familyBody(4, { limitMax: 4000, policy: "amount_minor <= ${limit_minor} && amount_minor < 1000" });
      const reply = await t.call("POST", `/grant-families/${familyId}/impact`, { key: auditor, body: { family: candidate, days: 7 } });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      expect(reply.body).toMatchObject({
        family_id: familyId,
        current_version: 3,
        candidate_version: 4,
        days: 7,
        changed: 1,
        truncated: false,
        skipped: [],
      });
      expect(reply.body.replayed).toBeGreaterThanOrEqual(3);
      expect(reply.body.changes).toEqual([
        expect.objectContaining({
          ledger_id: decided[1].ledger_id,
          grant_id: grant.body.id,
          tool: "payments.send",
          before: expect.objectContaining({ outcome: "allow" }),
          after: expect.objectContaining({ outcome: "deny", decided_by: "policy" }),
        }),
      ]);
      // Unchanged terms change nothing; a preview writes nothing.
      const same = await t.call("POST", `/grant-families/${familyId}/impact`, {
        key: auditor,
        body: { family: familyBody(4, { limitMax: 4000 }) },
      });
      expect(same.body.changed).toBe(0);
      expect(await t.db.store.countRows()).toEqual(before);
    });

    it("lists the grants whose parameters the candidate refuses instead of guessing", async () => {
      const reply = await t.call("POST", `/grant-families/${familyId}/impact`, {
        key: auditor,
        body: { family: familyBody(5, { limitMax: 1000 }) },
      });
      expect(reply.status).toBe(200);
      expect(reply.body.skipped.length).toBeGreaterThanOrEqual(1);
      expect(reply.body.skipped[0].reason).toContain("limit_minor");
    });

    /** The outcome the preview predicts for each decision: the changed one, else the one sealed. */
    function predicted(
      preview: { changes: { ledger_id: string; after: { outcome: string; reason_code: string } }[] },
      decisions: { ledger_id: string; outcome: string; would_outcome?: string; reason_code: string }[],
    ) {
      return decisions.map((d) => {
        const change = preview.changes.find((c) => c.ledger_id === d.ledger_id);
        return change === undefined ? [d.would_outcome ?? d.outcome, d.reason_code] : [change.after.outcome, change.after.reason_code];
      });
    }

    /** Pushes the candidate as a family of its own and instantiates it: the grant a real replay runs on. */
    async function pushAndInstantiate(
      body: GrantFamilyBody,
      parameters: Record<string, unknown>,
    ): Promise<{ familyId: string; grantId: string }> {
      const pushed = await t.call("POST", "/grant-families", { key: issuer, body });
      expect(pushed.status, JSON.stringify(pushed.body)).toBe(201);
      const grant = await t.call("POST", `/grant-families/${pushed.body.id}/instantiate`, {
        key: issuer,
        body: { version: pushed.body.version, parameters },
      });
      expect(grant.status, JSON.stringify(grant.body)).toBe(201);
      return { familyId: pushed.body.id, grantId: grant.body.id };
    }

    it("replays an observe decision whose certification was skipped as enforce decides it: a forged attestation is refused, as a real replay refuses it", async () => {
      const agentId = await agent(true);
      const agentKey = await t.key(`impact-cert-key-${agentId}`, ["agent"], { kind: "service", agent_id: agentId });
      const observed = await pushAndInstantiate(familyBody(1, { name: "impact-cert" }), { agent_id: agentId, mode: "observe" });
      const forged = { ...ATTESTATION, content_hash: `sha256:${"f".repeat(64)}` };
      const actions = [{ attestation: ATTESTATION }, { attestation: forged }, {}];
      const pay = (grantId: string, extra: object) => ({
        grant_id: grantId,
        tool: "payments.send",
        amount_minor: 500,
        currency: "EUR",
        ...extra,
      });
      const sealed: Decision[] = [];
      for (const extra of actions)
        sealed.push((await t.call("POST", "/authorize", { key: agentKey, body: pay(observed.grantId, extra) })).body);
      // In observe the certification gate is skipped: every one was allowed and enforce was said to allow it.
      expect(sealed.map((d) => [d.outcome, d.would_outcome])).toEqual([
        ["allow", "allow"],
        ["allow", "allow"],
        ["allow", "allow"],
      ]);
      const candidate = familyBody(2, { name: "impact-cert", mode: "enforce" });
      const preview = await t.call("POST", `/grant-families/${observed.familyId}/impact`, {
        key: auditor,
        body: { family: candidate, days: 1 },
      });
      expect(preview.status, JSON.stringify(preview.body)).toBe(200);
      expect(preview.body).toMatchObject({ replayed: 3, changed: 2 });
      // The real replay: the same actions on the candidate's enforce grant.
      const enforced = await pushAndInstantiate(candidate, { agent_id: agentId });
      const real: Decision[] = [];
      for (const extra of actions)
        real.push((await t.call("POST", "/authorize", { key: agentKey, body: pay(enforced.grantId, extra) })).body);
      expect(real.map((d) => [d.outcome, d.reason_code])).toEqual([
        ["allow", expect.any(String)],
        ["deny", "certification.attestation_mismatch"],
        ["deny", "certification.attestation_missing"],
      ]);
      expect(predicted(preview.body, sealed).map(([outcome]) => outcome)).toEqual(real.map((d) => d.outcome));
      expect(predicted(preview.body, sealed).slice(1)).toEqual(real.slice(1).map((d) => [d.outcome, d.reason_code]));
      // A record sealed before decisions named their certificate is replayed with the certificate
      // valid at its time: the same forged attestation, sealed that older way, is refused as well.
      const forgedRow = (await t.db.store.decisionPath().getLedger(sealed[1].ledger_id))!;
      const {
        certificate_id: _named,
        agent_id,
        created_at: _at,
        grant_id,
        kind: _kind,
        ledger_id: _id,
        outcome,
        seq: _seq,
        tree_id,
        ...rest
      } = JSON.parse(forgedRow.record);
      expect(_named).toEqual(expect.stringMatching(/^crt_/));
      const legacyId = `${sealed[1].ledger_id.slice(0, -1)}${sealed[1].ledger_id.endsWith("z") ? "y" : "z"}`;
      await sealRecord(t.db.store.decisionPath(), {
        id: legacyId,
        tree_id,
        kind: "decision",
        grant_id,
        agent_id,
        outcome,
        created_at: Date.now(),
        body: rest,
      });
      const again = await t.call("POST", `/grant-families/${observed.familyId}/impact`, {
        key: auditor,
        body: { family: familyBody(3, { name: "impact-cert", mode: "enforce" }), days: 1 },
      });
      expect(again.body.changes.find((c: { ledger_id: string }) => c.ledger_id === legacyId)).toMatchObject({
        before: { outcome: "allow" },
        after: { outcome: "deny", reason_code: "certification.attestation_mismatch" },
      });
    });

    it("counts settlements as a live store does: captured amounts and released partial holds predict `exhausted` as a real replay decides", async () => {
      const agentId = await agent(true);
      const agentKey = await t.key(`impact-budget-key-${agentId}`, ["agent"], { kind: "service", agent_id: agentId });
      const parameters = { agent_id: agentId, limit_minor: 2000 };
      const current = await pushAndInstantiate(familyBody(1, { name: "impact-budget", budget: 5000 }), parameters);
      // Four payments of 2000; the first is settled at 500 (1500 released), the second in full.
      const settleAt = [500, 2000, undefined, undefined];
      async function run(grantId: string) {
        const decisions: Decision[] = [];
        for (const settled of settleAt) {
          const decision = (
            await t.call("POST", "/authorize", {
              key: agentKey,
              body: { grant_id: grantId, tool: "payments.send", amount_minor: 2000, currency: "EUR", attestation: ATTESTATION },
            })
          ).body;
          decisions.push(decision);
          if (settled !== undefined && decision.outcome === "allow") {
            expect(
              (await t.call("POST", `/decisions/${decision.ledger_id}/settle`, { key: agentKey, body: { amount_minor: settled } })).status,
            ).toBe(200);
          }
        }
        return decisions;
      }
      const sealed = await run(current.grantId);
      // 500 + 2000 settled and 2000 held leave 500 of 5000: the fourth is exhausted.
      expect(sealed.map((d) => d.outcome)).toEqual(["allow", "allow", "allow", "exhausted"]);
      const same = await t.call("POST", `/grant-families/${current.familyId}/impact`, {
        key: auditor,
        body: { family: familyBody(2, { name: "impact-budget", budget: 5000 }), days: 1 },
      });
      expect(same.body).toMatchObject({ replayed: 4, changed: 0 });
      // With 7000 the fourth fits (6500); counting every hold as never settled (8000) would not.
      const candidate = familyBody(2, { name: "impact-budget", budget: 7000 });
      const preview = await t.call("POST", `/grant-families/${current.familyId}/impact`, {
        key: auditor,
        body: { family: candidate, days: 1 },
      });
      expect(preview.status, JSON.stringify(preview.body)).toBe(200);
      const real = await run((await pushAndInstantiate(candidate, parameters)).grantId);
      expect(real.map((d) => d.outcome)).toEqual(["allow", "allow", "allow", "allow"]);
      expect(predicted(preview.body, sealed).map(([outcome]) => outcome)).toEqual(real.map((d) => d.outcome));
      expect(preview.body.changes).toEqual([
        expect.objectContaining({ ledger_id: sealed[3].ledger_id, before: expect.objectContaining({ outcome: "exhausted" }) }),
      ]);
    });

    it(`reads at most ${IMPACT_CERTIFICATES_PER_AGENT_MAX} certificates of an agent: at the limit its decisions are replayed, past it its grant is skipped`, async () => {
      const agentId = await agent(true);
      const agentKey = await t.key(`impact-certs-key-${agentId}`, ["agent"], { kind: "service", agent_id: agentId });
      const current = await pushAndInstantiate(familyBody(1, { name: "impact-certs" }), { agent_id: agentId });
      const decision = await t.call("POST", "/authorize", {
        key: agentKey,
        body: { grant_id: current.grantId, tool: "payments.send", amount_minor: 500, currency: "EUR", attestation: ATTESTATION },
      });
      expect(decision.body.outcome).toBe("allow");
      /** Adds `count` revoked certificates of the agent's past, after the one it holds. */
      const addPast = (count: number, prefix: string) =>
        t.db.raw(
          `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
         INSERT INTO certificates (id, agent_id, environment, issued_by, issued_at, basis, provenance_version, manifest_hash, content_hash, checks, revoked_at)
         SELECT ? || i, ?, ?, 'certifier@example.com', 1, 'old', 'model-0', 'sha256:0', 'sha256:0', '[]', 2 FROM n`,
          [count, prefix, agentId, ENVIRONMENT],
        );
      await addPast(IMPACT_CERTIFICATES_PER_AGENT_MAX - 1, "crt_past_a_");
      const candidate = { family: familyBody(2, { name: "impact-certs", budget: 7000 }), days: 1 };
      const atLimit = await t.call("POST", `/grant-families/${current.familyId}/impact`, { key: auditor, body: candidate });
      expect(atLimit.status, JSON.stringify(atLimit.body)).toBe(200);
      expect(atLimit.body).toMatchObject({ replayed: 1, changed: 0, skipped: [] });
      await addPast(1, "crt_past_b_");
      const past = await t.call("POST", `/grant-families/${current.familyId}/impact`, { key: auditor, body: candidate });
      expect(past.status, JSON.stringify(past.body)).toBe(200);
      expect(past.body).toMatchObject({ replayed: 0, changed: 0, skipped: [{ grant_id: current.grantId, decisions: 1 }] });
      expect(past.body.skipped[0].reason).toContain(`more than ${IMPACT_CERTIFICATES_PER_AGENT_MAX} certificates`);
    });

    it("takes the candidate as the family's YAML source, compiled as `authority compile` does: the same answer as its JSON, errors at their line and column", async () => {
      const candidate = familyBody(4, { limitMax: 4000, policy: "amount_minor <= ${limit_minor} && amount_minor < 1000" });
      const asJson = await t.call("POST", `/grant-families/${familyId}/impact`, { key: auditor, body: { family: candidate, days: 7 } });
      const asYaml = await t.call("POST", `/grant-families/${familyId}/impact`, {
        key: auditor,
        body: { source: stringify(candidate), days: 7 },
      });
      expect(asYaml.status, JSON.stringify(asYaml.body)).toBe(200);
      const { since: _a, symbolic: _b, ...json } = asJson.body;
      const { since: _c, symbolic: _d, ...yaml } = asYaml.body;
      expect(yaml).toEqual(json);
      expect(asYaml.body.symbolic.relation).toBe(asJson.body.symbolic.relation);
      // An unknown placeholder on the fifth line of the text is reported there.
      const broken = stringify(candidate).replace("${limit_minor}", "${limit_minr}");
      const refused = await t.call("POST", `/grant-families/${familyId}/impact`, { key: auditor, body: { source: broken } });
      expectProblem(refused, 422, "invalid_family");
      const at = refused.body.diagnostics.find((d: { code: string }) => d.code === "placeholder-unknown");
      const line = broken.split("\n").findIndex((l) => l.includes("${limit_minr}")) + 1;
      expect(at).toMatchObject({ line });
      expect(refused.body.detail).toContain(`line ${line}`);
      // Exactly one of the two: both, or neither, is the schema's refusal.
      for (const body of [{ family: candidate, source: stringify(candidate) }, { days: 7 }]) {
        const reply = await t.call("POST", `/grant-families/${familyId}/impact`, { key: auditor, body });
        expect(reply.status).toBe(400);
      }
    });

    it("refuses every hostile `source` with a 4xx and writes nothing: arbitrary text, an alias bomb, deep nesting, another family's YAML", async () => {
      const before = await t.db.store.countRows();
      const bomb = [
        "a: &a [x, x, x, x, x, x, x, x, x, x]",
        ...Array.from(
          { length: 9 },
          (_, i) =>
            `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}]`,
        ),
      ].join("\n");
      const fixed = [
        bomb,
        `${"[".repeat(5_000)}${"]".repeat(5_000)}`,
        stringify({ ...familyBody(5), id: "another-family" }),
        "",
        "\u0000",
        "id: x\nid: y",
      ];
      const hostile = fc.sample(fc.string({ maxLength: 300, unit: "binary" }), { numRuns: 40, seed: 0x5eed });
      for (const source of [...fixed, ...hostile]) {
        const reply = await t.call("POST", `/grant-families/${familyId}/impact`, { key: auditor, body: { source } });
        expect(reply.status, `${JSON.stringify(source).slice(0, 80)} → ${JSON.stringify(reply.body).slice(0, 200)}`).toBeGreaterThanOrEqual(
          400,
        );
        expect(reply.status).toBeLessThan(500);
      }
      expect(await t.db.store.countRows()).toEqual(before);
    });

    it("refuses a candidate of another family", async () => {
      const other = { ...familyBody(1), id: "another-family" };
      const body = { family: { ...other, content_hash: familyContentHash(other as never) } };
      expectProblem(await t.call("POST", `/grant-families/${familyId}/impact`, { key: auditor, body }), 422, "invalid_family");
    });
  });

  describe("push without a stated hash", () => {
    it("accepts a body without `content_hash` (written by hand) and pins the hash it computes", async () => {
      const { content_hash: _stated, ...handWritten } = { ...familyBody(1), id: "hand-written" };
      const reply = await t.call("POST", "/grant-families", { key: issuer, body: handWritten });
      expect(reply.status, JSON.stringify(reply.body)).toBe(201);
      expect(reply.body).toMatchObject({ name: "hand-written", version: 1, content_hash: familyContentHash(handWritten as never) });
      const again = await t.call("POST", "/grant-families", {
        key: issuer,
        body: { ...handWritten, content_hash: reply.body.content_hash },
      });
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ id: reply.body.id, created: false });
    });
  });
}
