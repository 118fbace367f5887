// What operators watch, scraped from a real server process (node server/dist/main.js, SQLite, the
// authorize worker thread): decisions by outcome and gate, gated decisions waiting and the age of
// the oldest, approval latency, ledger records, group-commit batches and database errors; and the
// Grafana dashboard of docs/grafana/agent-authority.json, whose every query names a metric the
// server exposes and which shows every metric of the server's own.

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, CERTIFICATION } from "./http-harness.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const main = join(root, "server", "dist", "main.js");
const DASHBOARD = join(root, "docs", "grafana", "agent-authority.json");
const ATTESTATION = {
  manifest_hash: CERTIFICATION.manifest_hash,
  content_hash: CERTIFICATION.content_hash,
  provenance_version: CERTIFICATION.provenance_version,
};

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: Record<string, number>;
  targets?: { expr: string; refId: string }[];
  panels?: Panel[];
}

/** A free TCP port on the loopback interface. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
      .once("error", reject)
      .listen(0, "127.0.0.1", () => {
        const address = probe.address();
        probe.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
      });
  });
}

/** The value of one sample line (`name{labels} value`), or undefined when the server did not expose it. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** The metric families the scrape declares (`# TYPE name kind`). */
function families(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
}

/** The metric names a PromQL expression reads: identifiers of our families, a histogram's suffixes taken off. */
function metricNames(expr: string): string[] {
  const names = [...expr.matchAll(/\b((?:authority|process|nodejs)_[a-z0-9_]+)/g)].map((m) => m[1]!);
  return [...new Set(names.map((n) => n.replace(/_(bucket|sum|count)$/, "")))];
}

describe.skipIf(!existsSync(main))("metrics of a real server, and the Grafana dashboard", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "authority-metrics-"));
  let child: ChildProcess;
  let output = "";
  let base: string;
  const call = async (
    method: string,
    path: string,
    key: string,
    body?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }> => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: await response.json() };
  };
  const scrape = async (): Promise<string> => (await fetch(`${base}/metrics`)).text();

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}/v1`;
    child = spawn(process.execPath, [main], {
      env: {
        PATH: process.env["PATH"] ?? "",
        AUTHORITY_PORT: String(port),
        AUTHORITY_DATA_DIR: dataDir,
        AUTHORITY_ADMIN_KEY: ADMIN_KEY,
        AUTHORITY_AUTO_APPROVAL_CEILING_MINOR: "100000",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout!.on("data", (chunk) => {
      output += String(chunk);
    });
    child.stderr!.on("data", (chunk) => {
      output += String(chunk);
    });
    for (let i = 0; i < 400; i += 1) {
      if (
        await fetch(`${base}/health`).then(
          (r) => r.ok,
          () => false,
        )
      )
        return;
      if (child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`server did not start: ${output}`);
  }, 60_000);

  afterAll(async () => {
    if (child !== undefined && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("counts decisions by outcome and gate, what waits for an approval, approvals, settlements and batches", async () => {
    const before = await scrape();
    expect(output).toContain('"authorize_thread":"worker"');
    const agent = (await call("POST", "/agents", ADMIN_KEY, { name: "watched" })).body;
    expect((await call("POST", `/agents/${agent.id}/certification`, ADMIN_KEY, CERTIFICATION)).status).toBe(201);
    const agentKey = (
      await call("POST", "/keys", ADMIN_KEY, { identity: "watched-key", kind: "service", roles: ["agent"], agent_id: agent.id })
    ).body.key as string;
    const approverKey = (await call("POST", "/keys", ADMIN_KEY, { identity: "cfo@example.com", kind: "human", roles: ["approver"] })).body
      .key as string;
    const grant = await call("POST", "/grants", ADMIN_KEY, {
      agent_id: agent.id,
      principal_type: "human",
      principal_id: "alice@example.com",
      scope: { tool: ["payments.*"] },
      budget_amount_minor: 10_000,
      budget_currency: "EUR",
      policy: 'amount_minor <= 500 || approver == "cfo@example.com"',
    });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
    const pay = (amount: number, tool = "payments.send") => ({
      grant_id: grant.body.id,
      tool,
      amount_minor: amount,
      currency: "EUR",
      attestation: ATTESTATION,
    });
    const allowed = await call("POST", "/authorize", agentKey, pay(100));
    expect(allowed.body.outcome).toBe("allow");
    expect((await call("POST", "/authorize", agentKey, pay(100, "mail.send"))).body).toMatchObject({
      outcome: "deny",
      decided_by: "scope",
    });
    const gated = await call("POST", "/authorize", agentKey, pay(2_000));
    expect(gated.body).toMatchObject({ outcome: "gated", decided_by: "policy" });

    // One reading of the database serves the scrapes of a second (METRICS_LIMITS.gatedWaitingCacheMs).
    await new Promise((r) => setTimeout(r, 1_100));
    const waiting = await scrape();
    expect(sample(waiting, "authority_gated_decisions_waiting")).toBe(1);
    expect(sample(waiting, "authority_gated_decision_oldest_age_seconds")).toBeGreaterThanOrEqual(0);
    const delta = (text: string, series: string): number => (sample(text, series) ?? Number.NaN) - (sample(before, series) ?? 0);
    expect(delta(waiting, 'authority_decisions_total{outcome="allow",gate="none"}')).toBe(1);
    expect(delta(waiting, 'authority_decisions_total{outcome="deny",gate="scope"}')).toBe(1);
    expect(delta(waiting, 'authority_decisions_total{outcome="gated",gate="policy"}')).toBe(1);
    expect(delta(waiting, 'authority_ledger_records_total{kind="decision"}')).toBe(3);
    // The worker's group commits reach the main thread's scrape: three decisions, at least one batch.
    expect(delta(waiting, "authority_group_commit_batch_size_sum")).toBeGreaterThanOrEqual(3);
    expect(delta(waiting, "authority_group_commit_batch_size_count")).toBeGreaterThanOrEqual(1);

    expect((await call("POST", `/decisions/${gated.body.ledger_id}/approve`, approverKey, { note: "ok" })).status).toBe(201);
    expect((await call("POST", `/decisions/${allowed.body.ledger_id}/settle`, agentKey, { amount_minor: 80 })).status).toBe(200);
    // A repeated settlement answers the first one and seals nothing.
    expect((await call("POST", `/decisions/${allowed.body.ledger_id}/settle`, agentKey, { amount_minor: 80 })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1_100));
    const after = await scrape();
    expect(sample(after, "authority_gated_decisions_waiting")).toBe(0);
    expect(sample(after, "authority_gated_decision_oldest_age_seconds")).toBe(0);
    expect(delta(after, "authority_decision_approval_latency_seconds_count")).toBe(1);
    expect(delta(after, 'authority_decision_approval_latency_seconds_bucket{le="+Inf"}')).toBe(1);
    expect(delta(after, 'authority_ledger_records_total{kind="settlement"}')).toBe(1);
    for (const kind of ["retried", "contention", "failed"])
      expect(sample(after, `authority_database_errors_total{kind="${kind}"}`)).toBe(0);
    for (const action of ["notify", "revoke"])
      expect(sample(after, `authority_breaker_trips_total{action="${action}",mode="armed"}`)).toBe(0);
  }, 60_000);

  it("has a dashboard whose every query reads a metric the server exposes, and which shows every metric of the server's own", async () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8")) as {
      title: string;
      uid: string;
      schemaVersion: number;
      panels: Panel[];
      templating: { list: { name: string; type: string }[] };
    };
    expect(dashboard).toMatchObject({ title: expect.any(String), uid: expect.stringMatching(/^[a-z0-9-]{1,40}$/) });
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    expect(dashboard.templating.list).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: "datasource", type: "datasource" })]),
    );
    const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    const exposed = families(await scrape());
    const read = new Set<string>();
    for (const panel of panels.filter((p) => p.type !== "row")) {
      expect(panel.targets?.length ?? 0, panel.title).toBeGreaterThan(0);
      expect(panel.gridPos, panel.title).toEqual(
        expect.objectContaining({ h: expect.any(Number), w: expect.any(Number), x: expect.any(Number), y: expect.any(Number) }),
      );
      for (const target of panel.targets!) {
        const names = metricNames(target.expr);
        expect(names.length, `${panel.title}: ${target.expr}`).toBeGreaterThan(0);
        for (const name of names) {
          expect(exposed.has(name), `${panel.title}: \`${name}\` is not in /v1/metrics`).toBe(true);
          read.add(name);
        }
        // A histogram is read through its buckets, sums or counts, never by its bare name.
        for (const name of names.filter((n) => exposed.get(n) === "histogram"))
          expect(target.expr, panel.title).toMatch(new RegExp(`${name}_(bucket|sum|count)\\b`));
      }
    }
    const own = [...exposed.keys()].filter((n) => n.startsWith("authority_"));
    expect(own.filter((n) => !read.has(n))).toEqual([]);
  });
});
