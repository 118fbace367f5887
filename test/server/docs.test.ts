// The API reference names every problem code and every endpoint the server serves.

import { readFileSync } from "node:fs";
import { ENDPOINTS, PROBLEM_CODES } from "@agent-authority/api";
import { describe, expect, it } from "vitest";

const api = readFileSync(new URL("../../docs/api.md", import.meta.url), "utf8");

describe("docs/api.md", () => {
  it("lists every problem code with its status", () => {
    for (const [code, { status }] of Object.entries(PROBLEM_CODES)) expect(api, code).toContain(`| ${status} | \`${code}\` |`);
  });

  it("lists every endpoint", () => {
    for (const e of ENDPOINTS) expect(api, e.path).toContain(`\`${e.method.toUpperCase()} /v1${e.path}\``);
  });
});
