// The console as served, without a browser: security headers, exact-name file serving, the endpoint
// table it reads, and sources that never parse data as HTML.

import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ENDPOINTS } from "@agent-authority/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, startTestServer, type LogLine, type TestServer } from "../server/http-harness.js";
import type { StoreTarget } from "../server/targets.js";

const CONSOLE_DIR = fileURLToPath(new URL("../../server/console/", import.meta.url));

const sqlite: StoreTarget = {
  name: "sqlite",
  async create() {
    const dir = mkdtempSync(join(tmpdir(), "authority-console-"));
    return { url: join(dir, "authority.db"), dispose: async () => rmSync(dir, { recursive: true, force: true }) };
  },
};

describe("console sources", () => {
  const scripts = readdirSync(CONSOLE_DIR).filter((f) => f.endsWith(".js"));

  it("never turn data into HTML or code", () => {
    expect(scripts.length).toBeGreaterThan(3);
    for (const file of scripts) {
      const code = readFileSync(join(CONSOLE_DIR, file), "utf8")
        .split("\n")
        .filter((l) => !/^\s*(\/\/|\*|\/\*)/.test(l))
        .join("\n");
      expect(code, file).not.toMatch(
        /innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setAttribute\(\s*["']style/,
      );
    }
  });

  it("keep the page free of inline script, inline style and event attributes", () => {
    for (const file of readdirSync(CONSOLE_DIR).filter((f) => f.endsWith(".html"))) {
      const html = readFileSync(join(CONSOLE_DIR, file), "utf8");
      expect(html, file).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=|https?:\/\//i);
    }
  });
});

describe("console served at /console", () => {
  let t: TestServer;
  let origin: string;
  const logs: LogLine[] = [];
  beforeAll(async () => {
    t = await startTestServer(sqlite, {}, logs);
    origin = t.baseUrl.replace(/\/v1$/, "");
  });
  afterAll(async () => {
    await t?.close();
  });

  it("answers with a strict Content-Security-Policy and no caching", async () => {
    for (const path of ["/console/", "/console/main.js", "/console/console.css", "/console/endpoints.json"]) {
      const reply = await fetch(`${origin}${path}`);
      expect(reply.status, path).toBe(200);
      const csp = reply.headers.get("content-security-policy") ?? "";
      for (const directive of [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "frame-ancestors 'none'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
      ]) {
        expect(csp, path).toContain(directive);
      }
      expect(csp).not.toMatch(/unsafe-|\*|https?:/);
      expect(reply.headers.get("x-content-type-options")).toBe("nosniff");
      expect(reply.headers.get("x-frame-options")).toBe("DENY");
      expect(reply.headers.get("cache-control")).toBe("no-store");
    }
    expect((await fetch(`${origin}/console/main.js`)).headers.get("content-type")).toMatch(/^text\/javascript/);
  });

  it("logs each console request with the path the client sent, and labels its metrics by a bounded template", async () => {
    logs.length = 0;
    const paths = ["/console/", "/console/main.js", "/console/view-grants.js", "/console/nothing-here.js", `/console/${"x".repeat(600)}`];
    for (const path of paths) await fetch(`${origin}${path}`);
    const logged = logs.filter((l) => l.msg === "request" && String(l.fields["path"]).startsWith("/console")).map((l) => l.fields["path"]);
    expect(logged).toEqual([...paths.slice(0, 4), `/console/${"x".repeat(503)}…`]);
    const metrics = await (await fetch(`${t.baseUrl}/metrics`)).text();
    const routes = new Set([...metrics.matchAll(/authority_http_requests_total\{method="GET",route="([^"]*)"/g)].map((m) => m[1]));
    expect(routes).toContain("/console/");
    expect(routes).toContain("/console/:file");
    for (const route of routes) expect(route).not.toMatch(/main\.js|view-grants|nothing-here|xxx/);
    expect(routes).not.toContain("/");
    expect(routes).not.toContain("/:file");
  });

  it("redirects /console to /console/ and serves only the files it has", async () => {
    const bare = await fetch(`${origin}/console`, { redirect: "manual" });
    expect(bare.status).toBe(308);
    expect(bare.headers.get("location")).toBe("/console/");
    for (const path of [
      "/console/nothing.js",
      "/console/..%2Fsrc%2Fhttp%2Fconsole.ts",
      "/console/%2e%2e/package.json",
      "/console/sub/main.js",
    ]) {
      expect((await fetch(`${origin}${path}`)).status, path).toBe(404);
    }
  });

  it("publishes the endpoint table the server enforces, without secrets or summaries", async () => {
    const table = (await (await fetch(`${origin}/console/endpoints.json`)).json()) as { endpoints: unknown };
    expect(table.endpoints).toEqual(ENDPOINTS.map((e) => ({ method: e.method, path: e.path, roles: e.roles, human: e.human })));
  });

  it("GET /v1/whoami answers the calling key's identity, kind and roles, never its secret", async () => {
    const key = await t.key("dana@example.com", ["approver", "auditor"]);
    const me = await t.call("GET", "/whoami", { key, via: "x-api-key" });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ identity: "dana@example.com", kind: "human", roles: ["approver", "auditor"], status: "active" });
    expect(JSON.stringify(me.body)).not.toContain(key);
    expect((await t.call("GET", "/whoami", { key: ADMIN_KEY })).body).toMatchObject({ identity: "admin", roles: ["admin"] });
    expect((await t.call("GET", "/whoami")).status).toBe(401);
  });
});
