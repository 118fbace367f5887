// A sealed record edited in the database into what the server never seals (a member removed, one of
// another type, text that is not JSON, too long or too deep) is refused by its kind's decoder with a
// SealedRecordError naming the record and the field. Over HTTP every read that meets it answers 500
// `internal_error` without internals, as a damaged row does (decisions 0350, 1821); the verifier
// names it as the broken link; the server goes on serving, and the record restored reads again.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalJson, linkHash } from "../../server/src/services/seal/index.js";
import { SEALED_CHARS_MAX, SEALED_DEPTH_MAX } from "../../server/src/services/seal/index.js";
import { certifiedAgent, issueGrant, startDecisionServer, type DecisionServer } from "./decisions-http.js";
import { familyBody } from "./families-http.js";
import { ADMIN_KEY, CERTIFICATION } from "./http-harness.js";
import { forEachStore, type StoreTarget } from "./targets.js";

const CFO = "cfo@example.com";
const GATED_POLICY = `amount_minor <= 1000 || approver == "${CFO}"`;
const ATTESTATION = {
  manifest_hash: CERTIFICATION.manifest_hash,
  content_hash: CERTIFICATION.content_hash,
  provenance_version: CERTIFICATION.provenance_version,
};

/** Nested arrays `depth` levels deep. */
function nested(depth: number): unknown {
  let value: unknown = 0;
  for (let i = 0; i < depth; i += 1) value = [value];
  return value;
}

/** The damages done to a genuine record's text, each with the field its decoder names. */
function damages(genuine: string, member: string, wrong: unknown): { name: string; text: string; field: string }[] {
  const record = JSON.parse(genuine) as Record<string, unknown>;
  const without = { ...record };
  delete without[member];
  const deep = { ...record, deep: nested(SEALED_DEPTH_MAX) };
  return [
    { name: `\`${member}\` removed`, text: canonicalJson(without), field: member },
    { name: `\`${member}\` of another type`, text: canonicalJson({ ...record, [member]: wrong }), field: member },
    { name: "not JSON", text: genuine.slice(0, genuine.length - 1), field: "$" },
    { name: "a JSON array", text: "[]", field: "$" },
    { name: "longer than the limit", text: canonicalJson({ ...record, pad: "x".repeat(SEALED_CHARS_MAX) }), field: "$" },
    { name: "deeper than the limit", text: canonicalJson(deep), field: "$" },
  ];
}

function damagedRecords(target: StoreTarget): void {
  let s: DecisionServer;
  let agent: { id: string; key: string };
  let approverKey: string;
  let grantId: string;
  let gated: string;
  let allowed: string;
  let settlement: string;
  const pay = (amount: number) => ({
    grant_id: grantId,
    tool: "payments.send",
    amount_minor: amount,
    currency: "EUR",
    attestation: ATTESTATION,
  });

  /** The answer of a request outside the recorder: a 500 is not an answer of the API document. */
  const raw = async (method: string, path: string, key: string, body?: unknown) => {
    const reply = await fetch(`${s.server.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: reply.status, type: reply.headers.get("content-type"), body: (await reply.json()) as Record<string, unknown> };
  };
  const refused = async (method: string, path: string, key: string, body?: unknown) => {
    const reply = await raw(method, path, key, body);
    expect(reply.status, `${method} ${path}: ${JSON.stringify(reply.body)}`).toBe(500);
    expect(reply.type).toMatch(/^application\/problem\+json/);
    expect(reply.body["code"]).toBe("internal_error");
    expect(JSON.stringify(reply.body)).not.toMatch(/SealedRecordError|sealed record/);
  };
  const stillServing = async () => {
    expect((await s.call("GET", `/agents/${agent.id}`, ADMIN_KEY)).status).toBe(200);
    expect((await s.call("GET", `/grants/${grantId}`, ADMIN_KEY)).status).toBe(200);
  };

  /** Runs `check` with the record of `ledgerId` replaced by `text` (its hash recomputed: only the decoder can tell), then restores it. */
  async function withRecord(ledgerId: string, text: string, check: () => Promise<void>): Promise<void> {
    const [row] = await s.db.raw("SELECT record, prev_hash, hash FROM ledger WHERE id = ?", [ledgerId]);
    const { record, prev_hash: prev, hash } = row as { record: string; prev_hash: string; hash: string };
    await s.db.raw(target.name === "sqlite" ? "DROP TRIGGER ledger_sealed" : "DROP TRIGGER ledger_sealed ON ledger");
    try {
      await s.db.raw("UPDATE ledger SET record = ?, hash = ? WHERE id = ?", [text, linkHash(prev, text), ledgerId]);
      await check();
    } finally {
      await s.db.raw("UPDATE ledger SET record = ?, hash = ? WHERE id = ?", [record, hash, ledgerId]);
      await s.db.raw(
        target.name === "sqlite"
          ? "CREATE TRIGGER ledger_sealed BEFORE UPDATE ON ledger BEGIN SELECT RAISE(ABORT, 'ledger records are sealed'); END"
          : "CREATE TRIGGER ledger_sealed BEFORE UPDATE ON ledger FOR EACH ROW EXECUTE FUNCTION authority_refuse_update()",
      );
    }
  }
  /** Runs `edit` then `check` with the update trigger of `table` gone, then `restore`, and puts the trigger back. */
  async function unsealed(table: string, edit: string, restore: string, params: unknown[], check: () => Promise<void>): Promise<void> {
    await s.db.raw(target.name === "sqlite" ? `DROP TRIGGER ${table}_sealed` : `DROP TRIGGER ${table}_sealed ON ${table}`);
    try {
      await s.db.raw(edit, params);
      await check();
    } finally {
      await s.db.raw(restore, params);
      await s.db.raw(
        target.name === "sqlite"
          ? `CREATE TRIGGER ${table}_sealed BEFORE UPDATE ON ${table} BEGIN SELECT RAISE(ABORT, '${table} records are sealed'); END`
          : `CREATE TRIGGER ${table}_sealed BEFORE UPDATE ON ${table} FOR EACH ROW EXECUTE FUNCTION authority_refuse_update()`,
      );
    }
  }
  const recordOf = async (ledgerId: string) =>
    ((await s.db.raw("SELECT record FROM ledger WHERE id = ?", [ledgerId]))[0] as { record: string }).record;
  const brokenAt = async (ledgerId: string, field: string) => {
    const verify = await s.call("GET", "/ledger/verify", ADMIN_KEY);
    expect(verify.status).toBe(200);
    expect(verify.body).toMatchObject({ ok: false, broken: { ledger_id: ledgerId } });
    const problem = (verify.body["broken"] as { problem: string }).problem;
    expect(problem).toContain(`\`${ledgerId}\``);
    expect(problem).toContain(`\`${field}\``);
  };

  beforeAll(async () => {
    s = await startDecisionServer(target);
    agent = await certifiedAgent(s, "damaged-buyer");
    approverKey = (await s.call("POST", "/keys", ADMIN_KEY, { identity: CFO, kind: "human", roles: ["approver"] })).body.key as string;
    grantId = (await issueGrant(s, agent.id, { policy: GATED_POLICY })).id;
    const gatedReply = await s.call("POST", "/authorize", agent.key, pay(2_500));
    expect(gatedReply.body.outcome, gatedReply.text).toBe("gated");
    gated = gatedReply.body.ledger_id as string;
    const allowReply = await s.call("POST", "/authorize", agent.key, pay(600));
    expect(allowReply.body.outcome, allowReply.text).toBe("allow");
    allowed = allowReply.body.ledger_id as string;
    const settled = await s.call("POST", `/decisions/${allowed}/settle`, agent.key, { amount_minor: 500 });
    expect(settled.status, settled.text).toBe(200);
    settlement = settled.body.ledger_id as string;
  });
  afterAll(async () => {
    await s?.close();
  });

  it("a damaged gated decision: its pending list, approval, abandonment and tree ledger answer 500, the verifier names it", async () => {
    for (const damage of damages(await recordOf(gated), "residual", 42)) {
      await withRecord(gated, damage.text, async () => {
        await refused("GET", "/decisions/pending", approverKey);
        await refused("POST", `/decisions/${gated}/approve`, approverKey, {});
        await refused("POST", `/decisions/${gated}/abandoned`, agent.key, { reason: "timeout", waited_ms: 5 });
        await refused("GET", `/grants/${grantId}/ledger`, ADMIN_KEY);
        await brokenAt(gated, damage.field);
        await stillServing();
      });
    }
    // Restored, it reads again and can be approved.
    expect((await s.call("GET", "/decisions/pending", approverKey)).body.decisions).toHaveLength(1);
    expect((await s.call("GET", `/grants/${grantId}/ledger`, ADMIN_KEY)).status).toBe(200);
  });

  it("a damaged held decision or settlement: settling again answers 500 and the verifier names the record", async () => {
    for (const damage of damages(await recordOf(allowed), "holds", [{ grant_id: grantId, amount_minor: "600" }])) {
      await withRecord(allowed, damage.text, async () => {
        await refused("POST", `/decisions/${allowed}/settle`, agent.key, { amount_minor: 500 });
        await brokenAt(allowed, damage.field === "holds" && damage.name.includes("type") ? "holds[0].amount_minor" : damage.field);
        await stillServing();
      });
    }
    for (const damage of damages(await recordOf(settlement), "amount_minor", -5)) {
      await withRecord(settlement, damage.text, async () => {
        await refused("POST", `/decisions/${allowed}/settle`, agent.key, { amount_minor: 500 });
        await refused("GET", `/grants/${grantId}/ledger`, ADMIN_KEY);
        await brokenAt(settlement, damage.field);
        await stillServing();
      });
    }
    const again = await s.call("POST", `/decisions/${allowed}/settle`, agent.key, { amount_minor: 500 });
    expect([again.status, again.body.ledger_id]).toEqual([200, settlement]);
    // Its tree reads again. (The Merkle log may have logged the settlement while it was damaged,
    // which the verifier then reports as rewritten: a tamper a restore does not undo.)
    expect((await s.call("GET", `/grants/${grantId}/ledger`, ADMIN_KEY)).status).toBe(200);
  });

  it("a record at the depth limit reads; one level deeper is refused", async () => {
    const genuine = JSON.parse(await recordOf(gated)) as Record<string, unknown>;
    const atLimit = canonicalJson({ ...genuine, deep: nested(SEALED_DEPTH_MAX - 1) });
    await withRecord(gated, atLimit, async () => {
      expect((await s.call("GET", "/decisions/pending", approverKey)).status).toBe(200);
    });
    await withRecord(gated, canonicalJson({ ...genuine, deep: nested(SEALED_DEPTH_MAX) }), async () => {
      await refused("GET", "/decisions/pending", approverKey);
    });
  });

  it("a damaged abandonment of a wait: the pending list and a repeated report answer 500 until it is restored", async () => {
    const report = { reason: "timeout", waited_ms: 5 };
    expect((await s.call("POST", `/decisions/${gated}/abandoned`, agent.key, report)).status).toBe(200);
    await unsealed(
      "grant_events",
      "UPDATE grant_events SET detail = replace(detail, '\"timeout\"', '\"bored\"') WHERE grant_id = ? AND kind = 'approval_wait_abandoned'",
      "UPDATE grant_events SET detail = replace(detail, '\"bored\"', '\"timeout\"') WHERE grant_id = ? AND kind = 'approval_wait_abandoned'",
      [grantId],
      async () => {
        await refused("GET", "/decisions/pending", approverKey);
        await refused("POST", `/decisions/${gated}/abandoned`, agent.key, report);
        await stillServing();
      },
    );
    const pending = await s.call("GET", "/decisions/pending", approverKey);
    expect(pending.body.decisions).toMatchObject([{ ledger_id: gated, abandoned: { reason: "timeout", waited_ms: 5 } }]);
  });

  it("a family version whose body no longer hashes to its content hash, or is not JSON, answers 500 when read or instantiated", async () => {
    const pushed = await s.call("POST", "/grant-families", ADMIN_KEY, familyBody(1, { name: "damaged-family" }));
    expect(pushed.status, pushed.text).toBe(201);
    const id = pushed.body.id as string;
    const instantiate = { parameters: { agent_id: agent.id, limit_minor: 100 } };
    for (const [edit, restore] of [
      ["replace(body, '\"payments\"', '\"treasury\"')", "replace(body, '\"treasury\"', '\"payments\"')"],
      ["'{' || body", "substr(body, 2)"],
    ]) {
      await unsealed(
        "grant_families",
        `UPDATE grant_families SET body = ${edit} WHERE id = ?`,
        `UPDATE grant_families SET body = ${restore} WHERE id = ?`,
        [id],
        async () => {
          await refused("GET", `/grant-families/${id}`, ADMIN_KEY);
          await refused("POST", `/grant-families/${id}/instantiate`, ADMIN_KEY, instantiate);
          await stillServing();
        },
      );
    }
    expect((await s.call("GET", `/grant-families/${id}`, ADMIN_KEY)).status).toBe(200);
    expect((await s.call("POST", `/grant-families/${id}/instantiate`, ADMIN_KEY, instantiate)).status).toBe(201);
  });
}

forEachStore("damaged sealed records", damagedRecords);

describe("the limits of a sealed record", () => {
  it("hold a request body at its own limits, one level below the top, and 16 times its length", () => {
    expect(SEALED_DEPTH_MAX).toBe(33);
    expect(SEALED_CHARS_MAX).toBe(16 * 65_536);
  });
});
