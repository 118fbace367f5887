// HEAVY (about half a minute): the multi-replica proof. Three server processes start at once on an
// empty PostgreSQL schema behind nginx configured from docs/deploy/nginx.conf; every promise of one
// process holds across them: the budget, one decision per idempotency key, one chain per tree, one
// trip per breach, revocations seen by every replica at once, and no acknowledged decision lost
// when a replica is killed.

import { spawnSync } from "node:child_process";
import { request } from "node:http";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { LATEST_MIGRATION, openStore, verifyLedger } from "@agent-authority/server";
import { CERTIFICATION } from "../server/http-harness.js";
import { agentWithKey, ATTESTATION, get, grant, post, type Answer } from "../server/server-processes.js";
import { PG_URL } from "../server/targets.js";
import { CLI_MAIN, FIRST_KEY, poolerProblem, replicaSuite, startCluster, type Cluster } from "./cluster.js";
import type { Breaker, CertificationStatus, Decision, KeyCreated } from "@agent-authority/sdk";

const MONEY = { budget_amount_minor: 1_000_000, budget_currency: "EUR" };
const payment = (grantId: string, amount = 100) => ({
  grant_id: grantId,
  tool: "payments.send",
  amount_minor: amount,
  currency: "EUR",
  attestation: ATTESTATION,
});

replicaSuite("three replicas on one PostgreSQL behind nginx (heavy)", () => replicaPromises(false));
replicaSuite("three replicas behind nginx, through PgBouncer in transaction mode (heavy)", () => replicaPromises(true), poolerProblem);

/** Every promise of one process, across replicas; with `pooler`, through PgBouncer (docs/deploy/pgbouncer.ini). */
function replicaPromises(pooler: boolean): void {
  let cluster: Cluster;
  let admin: string;
  let front: string;
  const replica = (i: number): string => cluster.replicas[i]!.baseUrl;
  beforeAll(async () => {
    cluster = await startCluster(3, { pooler });
    admin = cluster.adminKey;
    front = cluster.nginx.baseUrl;
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  async function withStore<T>(fn: (store: ReturnType<typeof openStore>) => Promise<T>): Promise<T> {
    const store = openStore(PG_URL, { schema: cluster.schema });
    try {
      return await fn(store);
    } finally {
      await store.close();
    }
  }

  it("started at once on an empty database, they migrate once and create one first admin key", async () => {
    // Through the pooler, every replica logged in to PgBouncer's database, never to PostgreSQL's.
    if (cluster.pooler !== undefined)
      expect(cluster.pooler.log()).toMatch(new RegExp(`login attempt: db=authority user=${cluster.schema}`));
    const printed = cluster.replicas.filter((r) => FIRST_KEY.test(r.output()));
    expect(printed).toHaveLength(1);
    expect(cluster.replicas.filter((r) => r.output().includes('"msg":"migrations applied"'))).toHaveLength(1);
    for (let i = 0; i < 3; i += 1) expect((await get(replica(i), "/whoami", admin)).identity).toBe("admin");
    await withStore(async (store) => {
      expect(await store.countKeys()).toBe(1);
      expect(await store.migrate(Date.now())).toEqual([]);
    });
    const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${cluster.schema}` });
    await client.connect();
    try {
      const rows = (await client.query("SELECT version FROM schema_migrations ORDER BY version")).rows.map((r) => Number(r.version));
      expect(rows).toEqual(Array.from({ length: LATEST_MIGRATION }, (_, i) => i + 1));
    } finally {
      await client.end();
    }
  });

  if (pooler) {
    it("a named statement does not survive its transaction in PgBouncer 1.18, which is why the replicas send none", async () => {
      const [first, second] = [
        new pg.Client({ connectionString: cluster.pooler!.url }),
        new pg.Client({ connectionString: cluster.pooler!.url }),
      ];
      await first.connect();
      await second.connect();
      try {
        await first.query({ name: "pooled_once", text: "SELECT 1 AS one" });
        // The other client holds the server connection the statement was prepared on (PgBouncer
        // hands out the last one used), so the next use is sent to another that never saw it.
        await second.query("BEGIN");
        await second.query("SELECT 1");
        await expect(first.query({ name: "pooled_once", text: "SELECT 1 AS one" })).rejects.toThrow(
          /prepared statement "pooled_once" does not exist/,
        );
        await second.query("COMMIT");
      } finally {
        await first.end();
        await second.end();
      }
    });

    it("a schema given in the URL's startup options is refused by PgBouncer at once, never ignored", async () => {
      const store = openStore(cluster.pooler!.url, { schema: cluster.schema });
      try {
        await expect(store.migrate(Date.now())).rejects.toThrow(/unsupported startup parameter: options/);
      } finally {
        await store.close();
      }
    });
  }

  it("nginx proxies /v1 and /console, answers readiness, serves nothing else, and passes the client's address", async () => {
    const ready = await fetch(`${front}/ready`);
    expect(ready.status).toBe(200);
    expect((await fetch(front.replace(/\/v1$/, "/console/"))).headers.get("content-type")).toMatch(/text\/html/);
    expect((await fetch(front.replace(/\/v1$/, "/elsewhere"))).status).toBe(404);
    // From another loopback address than nginx's own: the replica logs the client, not nginx.
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        `${front}/whoami`,
        { localAddress: "127.0.0.7", headers: { authorization: `Bearer ${admin}`, "x-forwarded-for": "203.0.113.1" } },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        },
      );
      req.on("error", reject);
      req.end();
    });
    expect(status).toBe(200);
    // A forged X-Forwarded-For sent by the client is not believed: nginx appends the real address.
    // The replica writes its log line as the answer leaves; read its output a moment later.
    const whoamiLines = (): string =>
      cluster.replicas
        .map((r) => r.output())
        .join("")
        .split("\n")
        .filter((line) => line.includes('"path":"/v1/whoami"'))
        .join("\n");
    for (let waited = 0; !whoamiLines().includes("127.0.0.7") && waited < 3_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
    const whoami = whoamiLines();
    expect(whoami).toMatch(/"path":"\/v1\/whoami"[^\n]*"client":"127\.0\.0\.7"/);
    expect(whoami).not.toMatch(/"client":"203\.0\.113\.1"/);
  });

  it("300 concurrent authorizes spread over the replicas allow exactly the budget, and usage equals the sealed records", async () => {
    const agent = await agentWithKey(front, "racer", admin);
    const byCount = await grant(front, agent.id, { budget_count: 37, budget_amount_minor: 1_000_000, budget_currency: "EUR" }, admin);
    const byAmount = await grant(front, agent.id, { budget_amount_minor: 4_100, budget_currency: "EUR" }, admin);
    const bodies = Array.from({ length: 300 }, (_, i) => payment(i % 2 === 0 ? byCount : byAmount));
    // Through nginx and straight to each replica, all in flight at once.
    const targets = [front, replica(0), replica(1), replica(2)];
    const replies = await Promise.all(bodies.map((body, i) => post(targets[i % targets.length]!, "/authorize", agent.key, body)));
    for (const reply of replies) expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const allowed = (grantId: string): Answer[] => replies.filter((r, i) => r.body.outcome === "allow" && bodies[i]!.grant_id === grantId);
    expect(allowed(byCount)).toHaveLength(37);
    expect(allowed(byAmount)).toHaveLength(41);
    expect(replies.filter((r) => r.body.outcome !== "allow").every((r) => r.body.outcome === "exhausted")).toBe(true);
    // Settle some allows through other replicas than decided them; then every replica reports the
    // same usage, and it is what the sealed records say.
    const settled = allowed(byAmount).slice(0, 10);
    await Promise.all(
      settled.map(async (reply, i) => {
        const answer = await post(replica(i % 3), `/decisions/${reply.body.ledger_id}/settle`, agent.key, { amount_minor: 60 });
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      }),
    );
    for (let i = 0; i < 3; i += 1) {
      expect(await get(replica(i), `/grants/${byCount}`, admin)).toMatchObject({ uses: 37, held_minor: 3_700, settled_minor: 0 });
      expect(await get(replica(i), `/grants/${byAmount}`, admin)).toMatchObject({ uses: 41, held_minor: 3_100, settled_minor: 600 });
    }
    await withStore(async (store) => {
      const rows = await store.decisionPath().ledgerChain(byAmount, 0, 10_000);
      expect(rows.filter((r) => r.kind === "decision" && r.outcome === "allow")).toHaveLength(41);
      expect(rows.filter((r) => r.kind === "settlement")).toHaveLength(10);
      expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
    });
    // Each replica answered some of them.
    for (const r of cluster.replicas) expect(r.output()).toMatch(/"path":"\/v1\/authorize","status":200/);
  });

  it("one Idempotency-Key sent to two replicas at the same moment decides once and holds once", async () => {
    const agent = await agentWithKey(front, "retrier", admin);
    const grantId = await grant(front, agent.id, { budget_amount_minor: 1_000_000, budget_currency: "EUR" }, admin);
    const body = JSON.stringify(payment(grantId));
    for (let k = 0; k < 5; k += 1) {
      const texts = await Promise.all(
        [0, 1, 2, 0, 1, 2].map(async (i) => {
          const response = await fetch(`${replica(i)}/authorize`, {
            method: "POST",
            body,
            headers: { authorization: `Bearer ${agent.key}`, "content-type": "application/json", "idempotency-key": `payment-${k}` },
          });
          expect(response.status).toBe(200);
          return response.text();
        }),
      );
      expect(new Set(texts).size).toBe(1);
    }
    for (let i = 0; i < 3; i += 1) expect(await get(replica(i), `/grants/${grantId}`, admin)).toMatchObject({ uses: 5, held_minor: 500 });
    await withStore(async (store) => expect(await store.decisionPath().ledgerChain(grantId, 0, 100)).toHaveLength(5));
  });

  it("one decision settled on three replicas at once settles once; one approval approved and used on three replicas at once counts once", async () => {
    const agent = await agentWithKey(front, "settler", admin);
    const grantId = await grant(front, agent.id, { ...MONEY, policy: 'amount_minor <= 500 || approver == "cfo@example.com"' }, admin);
    const allowed = await post(replica(0), "/authorize", agent.key, payment(grantId, 300));
    expect(allowed.body.outcome).toBe("allow");
    // The same amount replays the one settlement; another amount is refused: a settlement is final.
    const settles = await Promise.all(
      [0, 1, 2, 0, 1, 2].map((i) =>
        post(replica(i), `/decisions/${allowed.body.ledger_id}/settle`, agent.key, { amount_minor: 200 + (i === 2 ? 1 : 0) }),
      ),
    );
    const settled = settles.filter((r) => r.status === 200);
    expect(new Set(settled.map((r) => r.body.ledger_id)).size).toBe(1);
    // Replica 2 asks for 201, the others for 200: whichever reaches the database first is the settlement.
    const capturedMinor = settled[0]!.body.amount_minor as number;
    expect([200, 201]).toContain(capturedMinor);
    for (const replay of settled) expect(replay.body.amount_minor).toBe(capturedMinor);
    for (const refused of settles.filter((r) => r.status !== 200))
      expect(refused.body.code, JSON.stringify(refused.body)).toBe("already_settled");
    await withStore(async (store) =>
      expect((await store.decisionPath().ledgerChain(grantId, 0, 100)).filter((r) => r.kind === "settlement")).toHaveLength(1),
    );
    const gated = await post<Decision>(replica(1), "/authorize", agent.key, payment(grantId, 2_000));
    expect(gated.body.outcome).toBe("gated");
    const approver = (await post<KeyCreated>(front, "/keys", admin, { identity: "cfo@example.com", kind: "human", roles: ["approver"] }))
      .body.key;
    const approvals = await Promise.all([0, 1, 2].map((i) => post(replica(i), `/decisions/${gated.body.ledger_id}/approve`, approver, {})));
    const approved = approvals.filter((r) => r.status === 201 || r.status === 200);
    expect(approved, JSON.stringify(approvals.map((r) => r.body))).toHaveLength(1);
    const approvalId = approved[0]!.body.approval_id;
    const uses = await Promise.all(
      [0, 1, 2, 0, 1, 2].map((i) => post(replica(i), "/authorize", agent.key, { ...payment(grantId, 2_000), approval_id: approvalId })),
    );
    expect(uses.filter((r) => r.body.outcome === "allow")).toHaveLength(1);
    for (let i = 0; i < 3; i += 1) {
      expect(await get(replica(i), `/grants/${grantId}`, admin)).toMatchObject({
        uses: 2,
        held_minor: 2_000,
        settled_minor: capturedMinor,
      });
    }
  });

  it("a breaker fed from three replicas at once trips exactly once and revokes once", async () => {
    const agent = await agentWithKey(front, "breacher", admin);
    const grants = [await grant(front, agent.id, MONEY, admin), await grant(front, agent.id, MONEY, admin)];
    const approver = (await post<KeyCreated>(front, "/keys", admin, { identity: "risk@example.com", kind: "human", roles: ["approver"] }))
      .body.key;
    const contract = await post(front, `/agents/${agent.id}/contracts`, admin, {
      metric: "out_of_scope_rate",
      ceiling: 0.1,
      window_decisions: 20,
    });
    expect(contract.status, JSON.stringify(contract.body)).toBe(201);
    const breaker = await post<Breaker>(front, `/agents/${agent.id}/breakers`, admin, { contract_id: contract.body.id, action: "revoke" });
    expect(breaker.status, JSON.stringify(breaker.body)).toBe(201);
    const armed = await post(front, `/breakers/${breaker.body.id}/arm`, approver, { basis: "fresh agent", expecting_trips: 0 });
    expect(armed.status, JSON.stringify(armed.body)).toBe(200);
    for (let i = 0; i < 10; i += 1)
      expect((await post(replica(i % 3), "/authorize", agent.key, payment(grants[0]!))).body.outcome).toBe("allow");
    // 60 out-of-scope requests at once, 20 on each replica.
    const replies = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        post(replica(i % 3), "/authorize", agent.key, { grant_id: grants[i % 2]!, tool: "mail.send", attestation: ATTESTATION }),
      ),
    );
    for (const reply of replies) expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const got = await get<Breaker>(replica(2), `/breakers/${breaker.body.id}`, admin);
    expect(got.trips).toHaveLength(1);
    expect(got.trips[0]).toMatchObject({ performed: true });
    expect([...got.trips[0].grant_ids].sort()).toEqual([...grants].sort());
    // Every replica reads the same single trip.
    for (let i = 0; i < 2; i += 1) expect((await get(replica(i), `/breakers/${breaker.body.id}`, admin)).trips).toEqual(got.trips);
    await withStore(async (store) => {
      for (const id of grants) expect((await store.listGrantEvents(id)).filter((e) => e.kind === "revoked")).toHaveLength(1);
    });
    for (let i = 0; i < 3; i += 1)
      expect((await post(replica(i), "/authorize", agent.key, payment(grants[1]!))).body.outcome).not.toBe("allow");
  });

  it("a key, grant or certificate revoked on one replica is refused by every replica on its next request", async () => {
    const agent = await agentWithKey(front, "revoked", admin);
    const grantId = await grant(front, agent.id, MONEY, admin);
    const other = await grant(front, agent.id, MONEY, admin);
    const spare = await post<KeyCreated>(front, "/keys", admin, {
      identity: "revoked-spare",
      kind: "service",
      roles: ["agent"],
      agent_id: agent.id,
    });
    // Every replica has decided with each before the revocations, so whatever it keeps is warm.
    for (let i = 0; i < 3; i += 1) {
      for (const key of [agent.key, spare.body.key])
        expect((await post<Decision>(replica(i), "/authorize", key, payment(grantId))).body.outcome).toBe("allow");
      expect((await post(replica(i), "/authorize", agent.key, payment(other))).body.outcome).toBe("allow");
    }
    expect((await post(replica(0), `/keys/${spare.body.id}/revoke`, admin, { reason: "rotated" })).status).toBe(200);
    for (let i = 0; i < 3; i += 1) expect((await post(replica(i), "/authorize", spare.body.key, payment(grantId))).status).toBe(401);
    expect((await post(replica(1), `/grants/${other}/revoke`, admin, { reason: "done" })).status).toBe(200);
    for (let i = 0; i < 3; i += 1) expect((await post(replica(i), "/authorize", agent.key, payment(other))).body.outcome).toBe("deny");
    const certificate = (await get<CertificationStatus>(replica(0), `/agents/${agent.id}/certification`, admin)).certificate!.id;
    expect((await post(replica(2), `/certificates/${certificate}/revoke`, admin, { reason: "re-evaluate" })).status).toBe(200);
    for (let i = 0; i < 3; i += 1) {
      const reply = await post(replica(i), "/authorize", agent.key, payment(grantId));
      expect(reply.body.outcome).toBe("deny");
      expect(JSON.stringify(reply.body.gates)).toMatch(/certif/);
    }
    // Certified again on one replica, the agent is allowed on every replica at once.
    expect((await post(replica(0), `/agents/${agent.id}/certification`, admin, CERTIFICATION)).status).toBe(201);
    for (let i = 0; i < 3; i += 1) expect((await post(replica(i), "/authorize", agent.key, payment(grantId))).body.outcome).toBe("allow");
  });

  it("kill -9 of one replica under load loses no acknowledged decision; every chain verifies and the survivors keep answering", async () => {
    const agent = await agentWithKey(front, "crash", admin);
    const grants = await Promise.all(
      [0, 1, 2].map(() => grant(front, agent.id, { budget_amount_minor: 50_000_000, budget_currency: "EUR" }, admin)),
    );
    const acknowledged = new Map<string, string>();
    let stopped = false;
    async function client(seed: number): Promise<void> {
      for (let i = 0; !stopped; i += 1) {
        // Half the clients speak to the victim directly, half through nginx.
        const base = seed % 2 === 0 ? replica(2) : front;
        try {
          const reply = await post<Decision>(base, "/authorize", agent.key, payment(grants[(seed + i) % 3]!, 1 + (i % 50)));
          if (reply.status === 200) acknowledged.set(reply.body.ledger_id, reply.body.outcome);
          else if (base === front && reply.status === 502) continue;
          else throw new Error(`authorize answered ${reply.status}: ${JSON.stringify(reply.body)}`);
        } catch (error) {
          // The victim is gone: a refused or reset connection ends a direct client.
          if (error instanceof TypeError || error instanceof SyntaxError) {
            if (base !== front) return;
            continue;
          }
          throw error;
        }
      }
    }
    const load = Promise.all(Array.from({ length: 8 }, (_, i) => client(i)));
    await new Promise((r) => setTimeout(r, 1_500));
    cluster.replicas[2]!.child.kill("SIGKILL");
    await cluster.replicas[2]!.exited;
    await new Promise((r) => setTimeout(r, 500));
    stopped = true;
    await load;
    expect(acknowledged.size).toBeGreaterThan(20);
    // The survivors answer, directly and through nginx, which passes over the dead replica.
    for (let i = 0; i < 12; i += 1) {
      const reply = await post<Decision>(i % 3 === 2 ? front : replica(i % 3), "/authorize", agent.key, payment(grants[0]!));
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      acknowledged.set(reply.body.ledger_id, reply.body.outcome);
    }
    await withStore(async (store) => {
      const sealed = new Map<string, string | null>();
      for (const id of grants) for (const row of await store.decisionPath().ledgerChain(id, 0, 1_000_000)) sealed.set(row.id, row.outcome);
      for (const [id, outcome] of acknowledged) expect(sealed.get(id), id).toBe(outcome);
      expect((await verifyLedger(store)).ok).toBe(true);
    });
    const cli = spawnSync(process.execPath, [CLI_MAIN, "ledger", "verify", "--format", "json"], {
      env: { PATH: process.env["PATH"] ?? "", AUTHORITY_DATABASE_URL: PG_URL, AUTHORITY_DATABASE_SCHEMA: cluster.schema },
      encoding: "utf8",
    });
    expect(cli.status, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ ok: true, broken: null });
  });
}
