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

describe("the docs' shell commands", () => {
  it("name the server's port by AUTHORITY_PORT (8080 only as its default), never as a bare 8080", async () => {
    const { readdirSync } = await import("node:fs");
    const pages = [
      "README.md",
      ...readdirSync(new URL("../../docs/", import.meta.url))
        .filter((f) => f.endsWith(".md"))
        .map((f) => `docs/${f}`),
    ];
    const bare: string[] = [];
    for (const page of pages) {
      const text = readFileSync(new URL(`../../${page}`, import.meta.url), "utf8");
      for (const [, block] of text.matchAll(/```(?:sh|bash)\n([\s\S]*?)```/g)) {
        for (const line of block!.split("\n")) if (/(?<!:-)\b8080\b/.test(line)) bare.push(`${page}: ${line}`);
      }
    }
    expect(bare).toEqual([]);
  });
});
