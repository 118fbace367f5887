// The authorize hot path is counted in /v1/metrics and writes one `request` log line per request,
// as the Express path does, at the configured level.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, startTestServer, type LogLine, type TestServer } from "./http-harness.js";
import { forEachStore, type StoreTarget } from "./targets.js";

const series = (text: string, status: number): number => {
  const line = text
    .split("\n")
    .find((l) => l.startsWith(`authority_http_requests_total{method="POST",route="/v1/authorize",status="${status}"}`));
  return line === undefined ? 0 : Number(line.split(" ").pop());
};

function observeSuite(target: StoreTarget): void {
  let t: TestServer;
  const logs: LogLine[] = [];
  beforeAll(async () => {
    t = await startTestServer(target, {}, logs);
  });
  afterAll(async () => {
    await t?.close();
  });

  it("counts each authorize request by status with its latency, and logs it once", async () => {
    const before = (await t.call("GET", "/metrics")).body as string;
    const agent = await t.call("POST", "/agents", { key: ADMIN_KEY, body: { name: "observed" } });
    const agentKey = await t.key("observed-key", ["agent"], { kind: "service", agent_id: agent.body.id });
    logs.length = 0;
    const ok = await t.call("POST", "/authorize", {
      key: agentKey,
      body: { grant_id: "grt_0000000000000000000000000a", tool: "payments.send" },
    });
    expect(ok.status).toBe(200);
    expect((await t.call("POST", "/authorize", { key: "aa_unknown" })).status).toBe(401);
    expect((await t.call("POST", "/authorize", { key: agentKey, raw: "{", contentType: "application/json" })).status).toBe(400);
    const after = (await t.call("GET", "/metrics")).body as string;
    expect(series(after, 200) - series(before, 200)).toBe(1);
    expect(series(after, 401) - series(before, 401)).toBe(1);
    expect(series(after, 400) - series(before, 400)).toBe(1);
    expect(after).toMatch(/authority_http_request_duration_seconds_count\{method="POST",route="\/v1\/authorize"\} 3\n/);
    // The decision (a grant that does not exist: denied at the first gate) is counted by outcome and
    // gate, and the gated decisions waiting are read from this store's database (SQLite or PostgreSQL).
    const denied = (text: string): number => Number(/^authority_decisions_total\{outcome="deny",gate="grant"\} (\d+)$/m.exec(text)?.[1]);
    expect(denied(after) - denied(before)).toBe(1);
    expect(after).toMatch(/^authority_gated_decisions_waiting 0$/m);
    const lines = logs.filter((l) => l.msg === "request" && l.fields["path"] === "/v1/authorize");
    expect(lines.map((l) => [l.level, l.fields["status"]])).toEqual([
      ["info", 200],
      ["info", 401],
      ["info", 400],
    ]);
    expect(lines[0]!.fields["request_id"]).toBe(ok.headers.get("x-request-id"));
    expect(typeof lines[0]!.fields["duration_ms"]).toBe("number");
    // The key that asked is named by its id (never its secret), as on every other endpoint; an
    // unknown key has none, and a key known before its body was refused still does.
    expect(lines[0]!.fields["key_id"]).toMatch(/^key_/);
    expect(lines[1]!.fields["key_id"]).toBeUndefined();
    expect(lines[2]!.fields["key_id"]).toBe(lines[0]!.fields["key_id"]);
    expect(JSON.stringify(lines)).not.toContain(agentKey);
  });
}

describe("authorize hot path", () => {
  forEachStore("metrics and logs", observeSuite);
});
