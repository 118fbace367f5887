// Every endpoint called with no key and with a key of every role, on SQLite and PostgreSQL:
// 401 without a key, 403 for a missing role, and never either for a role the matrix allows.

import { readFileSync } from "node:fs";
import { ENDPOINTS, ROLES, type Endpoint } from "@agent-authority/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, expectProblem, startTestServer, type CallOptions, type Reply, type TestServer } from "./http-harness.js";
import { roleMatrixMarkdown } from "./role-matrix.js";
import { forEachStore, type StoreTarget } from "./targets.js";

/** Well-formed ids that name nothing: the role check runs before the lookup, so nothing changes. */
const UNKNOWN = {
  agent_id: "agt_0000000000000000000000000a",
  grant_id: "grt_0000000000000000000000000a",
  certificate_id: "crt_0000000000000000000000000a",
  key_id: "key_0000000000000000000000000a",
  breaker_id: "brk_0000000000000000000000000a",
  family_id: "fam_0000000000000000000000000a",
  webhook_id: "whk_0000000000000000000000000a",
  delivery_id: "whd_0000000000000000000000000a",
} as const;

function pathOf(endpoint: Endpoint): string {
  return endpoint.path.replace(/\{([a-z_]+)\}/g, (_m, name: keyof typeof UNKNOWN) => UNKNOWN[name]);
}

/** A GET of a stream: a refusal is read whole, an open stream only up to its headers. */
async function headOfStream(t: TestServer, method: string, path: string, options: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (options.key !== undefined) {
    if (options.via === "x-api-key") headers["x-api-key"] = options.key;
    else headers["authorization"] = `Bearer ${options.key}`;
  }
  const aborter = new AbortController();
  const response = await fetch(`${t.baseUrl}${path}`, { method, headers, signal: aborter.signal });
  if (response.status === 200) {
    aborter.abort();
    return { status: 200, body: undefined, contentType: response.headers.get("content-type"), headers: response.headers };
  }
  const body: unknown = JSON.parse(await response.text());
  return { status: response.status, body, contentType: response.headers.get("content-type"), headers: response.headers };
}

function matrixSuite(target: StoreTarget): void {
  let t: TestServer;
  const keys = new Map<string, string>();
  const serviceKeys = new Map<string, string>();
  beforeAll(async () => {
    t = await startTestServer(target);
    const agent = await t.call("POST", "/agents", { key: ADMIN_KEY, body: { name: "matrix-agent" } });
    for (const role of ROLES) {
      if (role === "agent") {
        keys.set(role, await t.key("matrix-agent-key", ["agent"], { kind: "service", agent_id: agent.body.id }));
      } else if (role === "enforcer") {
        // An enforcement point's key asks through AuthZEN for the agents it lists (decision 1701).
        keys.set(role, await t.key("matrix-enforcer-key", ["enforcer"], { kind: "service", agent_ids: [agent.body.id] }));
      } else {
        keys.set(role, await t.key(`${role}@example.com`, [role]));
        serviceKeys.set(role, await t.key(`${role}-service`, [role], { kind: "service" }));
      }
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  for (const endpoint of ENDPOINTS) {
    const label = `${endpoint.method.toUpperCase()} ${endpoint.path}`;
    it(`${label}: the matrix holds`, async () => {
      const before = await t.db.store.countRows();
      const method = endpoint.method.toUpperCase();
      const path = pathOf(endpoint);
      // A stream that opens is answered by its status and headers alone, then closed.
      const call =
        endpoint.mediaType === "text/event-stream" ? (m: string, p: string, o?: CallOptions) => headOfStream(t, m, p, o) : t.call;
      const noKey = await call(method, path);
      if (endpoint.roles === null) {
        expect(noKey.status, label).toBe(200);
        return;
      }
      expectProblem(noKey, 401, "unauthenticated");
      for (const role of ROLES) {
        for (const via of ["bearer", "x-api-key"] as const) {
          const reply = await call(method, path, { key: keys.get(role)!, via });
          if (!endpoint.roles.includes(role)) {
            expectProblem(reply, 403, "forbidden");
          } else {
            expect(reply.status, `${label} as ${role} via ${via}: ${JSON.stringify(reply.body)}`).not.toBe(401);
            expect(reply.body?.code, `${label} as ${role}`).not.toBe("forbidden");
            expect(reply.body?.code, `${label} as ${role}`).not.toBe("human_required");
          }
        }
        const service = serviceKeys.get(role);
        if (service !== undefined && endpoint.roles.includes(role) && endpoint.human) {
          expectProblem(await call(method, path, { key: service }), 403, "human_required");
        }
      }
      // Nothing above named a real resource or sent a valid body, so nothing changed.
      expect(await t.db.store.countRows()).toEqual(before);
    });
  }
}

forEachStore("role matrix", matrixSuite);

describe("docs/security.md", () => {
  it("shows the role matrix the server enforces", () => {
    const doc = readFileSync(new URL("../../docs/security.md", import.meta.url), "utf8");
    expect(doc).toContain(roleMatrixMarkdown());
  });
});
