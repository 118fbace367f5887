// `authority push` against a stand-in server on the loopback address: what it sends, and how it reports.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authority, authorityAsync, buildCli } from "./run-cli.js";

interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage["headers"];
  readonly body: Record<string, unknown>;
}

let server: Server;
let base = "";
const received: Received[] = [];

beforeAll(async () => {
  buildCli();
  server = createServer((req, res) => {
    let text = "";
    req.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
    req.on("end", () => {
      const body = JSON.parse(text) as Record<string, unknown>;
      received.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      if (req.headers.authorization !== "Bearer good-key") {
        res.writeHead(401, { "content-type": "application/problem+json" }).end(JSON.stringify({ code: "unauthenticated", title: "no valid key" }));
      } else if (body["id"] === "support-agent") {
        res.writeHead(409, { "content-type": "application/problem+json" }).end(JSON.stringify({ code: "family_version_conflict", title: "version 1 has other content" }));
      } else {
        res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ id: body["id"], version: body["version"] }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 180_000);

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("authority push", () => {
  it("sends each compiled family with the key, an idempotency key and the content hash", async () => {
    received.length = 0;
    const run = await authorityAsync(["push", "policies/procurement-agent.yaml", "policies/code-review-bot.yaml", "--server", `${base}/v1`], { env: { AUTHORITY_KEY: "good-key" } });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain("2 pushed, 0 not pushed");
    expect(received.map((r) => [r.method, r.url, r.body["id"]])).toEqual([
      ["POST", "/v1/grant-families", "code-review-bot"],
      ["POST", "/v1/grant-families", "procurement-agent"],
    ]);
    const first = received[0]!;
    expect(first.headers["content-type"]).toBe("application/json");
    expect(first.headers["idempotency-key"]).toBe(`family:code-review-bot:1:${String(first.body["content_hash"])}`);
    expect(first.body["content_hash"]).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("reports a refusal with the problem's code and exits 1", async () => {
    const run = await authorityAsync(["push", "policies/support-agent.yaml", "--server", base, "--key", "good-key"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("HTTP 409: family_version_conflict: version 1 has other content");
    const denied = await authorityAsync(["push", "policies/procurement-agent.yaml", "--server", base, "--key", "bad-key"]);
    expect(denied.code).toBe(1);
    expect(denied.stdout).toContain("HTTP 401: unauthenticated");
  });

  it("sends nothing when a family has errors, and needs a server and a key", async () => {
    received.length = 0;
    const run = await authorityAsync(["push", "test/cli/fixtures/broken/schema-error.yaml", "--server", base, "--key", "good-key"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("nothing was pushed");
    expect(received).toEqual([]);
    expect(authority(["push", "policies/"], { env: { AUTHORITY_SERVER: "", AUTHORITY_KEY: "" } }).code).toBe(2);
    expect(authority(["push", "policies/", "--server", base], { env: { AUTHORITY_KEY: "" } }).stderr).toContain("AUTHORITY_KEY");
  });
});
