// The text reports of `authority manifest`, and reading granted tools from a family or a grant.
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { buildManifest, compareManifest, grantedToolsOf, renderComparison, renderManifest } from "../../cli/src/manifest/index.js";

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

describe("renderManifest", () => {
  it("prints every registration, the hash, and no verdict for a complete manifest", () => {
    const manifest = buildManifest(fixture("mcp-agent"));
    expect(renderManifest(manifest)).toBe(
      [
        "tools (4):",
        "  mail.send        mcp    src/server.ts:20:13  tool",
        "  orders.lookup    mcp    src/server.ts:18:21  registerTool",
        "  payments.refund  mcp    src/server.ts:13:3  registerTool",
        "  search.web       mcp    src/server.ts:8:13  tool",
        "                          src/server.ts:23:13  tool",
        `manifest_hash: ${manifest.manifest_hash}`,
        "",
      ].join("\n"),
    );
  });

  it("prints each unresolved name as file:line:col with its help, and says not to certify", () => {
    const text = renderManifest(buildManifest(fixture("dynamic-agent")));
    expect(text).toContain(
      "warning: src/agent.ts:9:15: the tool name `name` of a `tool` call is not a static string\n  help: use a string literal",
    );
    expect(text).toContain("incomplete: 3 problem(s) above; do not certify this manifest");
  });
});

describe("renderComparison", () => {
  it("lists both directions and the verdict", () => {
    const manifest = buildManifest(fixture("guard-agent"));
    expect(renderComparison(compareManifest(manifest, ["mail.*", "orders.lookup", "payments.refund", "crm.notes"]), "refunds v3")).toBe(
      [
        "against refunds v3:",
        "  used but not granted (refused at run time): none",
        "  granted but never used (remove for least privilege):",
        "    crm.notes",
        "  least privilege: no",
        "",
      ].join("\n"),
    );
    expect(renderComparison(compareManifest(buildManifest(fixture("dynamic-agent")), ["status.check"]), "plugins")).toContain(
      "least privilege: unknown: the manifest is incomplete",
    );
  });
});

describe("grantedToolsOf", () => {
  it("reads a compiled family's grant scope and a grant's scope, keeping placeholders apart", () => {
    expect(grantedToolsOf({ id: "refunds", grant: { scope: { tool: ["payments.refund", "orders.*", "${extra_tool}"] } } })).toEqual({
      tools: ["payments.refund", "orders.*"],
      placeholders: ["${extra_tool}"],
    });
    expect(grantedToolsOf({ id: "grt_x", scope: { tool: ["search.web"] } })).toEqual({ tools: ["search.web"], placeholders: [] });
    expect(grantedToolsOf("not a family")).toEqual({ tools: [], placeholders: [] });
  });
});
