// Agent manifests read from code: tools found, names resolved or reported, the hash pinned, least privilege compared.
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { buildManifest, canonicalManifest, compareManifest, manifestHash } from "../../cli/src/manifest/index.js";

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "manifest-"));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Writes a small agent into a fresh directory and returns the directory. */
function agent(name: string, files: Record<string, string>): string {
  const dir = join(scratch, name);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const mcp = buildManifest(fixture("mcp-agent"));
const guarded = buildManifest(fixture("guard-agent"));
const dynamic = buildManifest(fixture("dynamic-agent"));

describe("an MCP server agent", () => {
  it("lists server.tool and server.registerTool names, literal or constant, sorted", () => {
    expect(mcp.tools.map((tool) => [tool.name, tool.kind])).toEqual([
      ["mail.send", "mcp"],
      ["orders.lookup", "mcp"],
      ["payments.refund", "mcp"],
      ["search.web", "mcp"],
    ]);
    expect(mcp.complete).toBe(true);
    expect(mcp.warnings).toEqual([]);
  });

  it("says where each tool is registered, every place once", () => {
    const search = mcp.tools.find((tool) => tool.name === "search.web")!;
    expect(search.registrations).toEqual([
      { file: "src/server.ts", line: 8, column: 13, call: "tool" },
      { file: "src/server.ts", line: 23, column: 13, call: "tool" },
    ]);
    expect(mcp.tools.find((tool) => tool.name === "payments.refund")!.registrations).toEqual([
      { file: "src/server.ts", line: 13, column: 3, call: "registerTool" },
    ]);
  });

  it("leaves test files out", () => {
    expect(mcp.files).toEqual(["src/server.ts", "src/tools.ts"]);
    expect(mcp.tools.some((tool) => tool.name === "test.only")).toBe(false);
  });
});

describe("an agent using the SDK's guard", () => {
  it("lists guarded tools from literals, constants and as-const lists, as kind guard", () => {
    expect(guarded.tools.map((tool) => [tool.name, tool.kind])).toEqual([
      ["mail.read", "guard"],
      ["mail.send", "guard"],
      ["orders.lookup", "guard"],
      ["payments.refund", "guard"],
    ]);
    expect(guarded.complete).toBe(true);
  });

  it("finds guard taken off the client as well as called on it", () => {
    const calls = guarded.tools.flatMap((tool) => tool.registrations.map((where) => where.line));
    expect(calls.sort((a, b) => a - b)).toEqual([10, 14, 24, 24]);
  });
});

describe("an agent with names the code does not fix", () => {
  it("reports each unresolvable name with file, line and column instead of guessing", () => {
    expect(dynamic.tools.map((tool) => tool.name)).toEqual(["status.check"]);
    expect(dynamic.complete).toBe(false);
    expect(dynamic.warnings.map(({ code, file, line, column }) => ({ code, file, line, column }))).toEqual([
      { code: "unresolved-tool-name", file: "src/agent.ts", line: 9, column: 15 },
      { code: "unresolved-tool-name", file: "src/agent.ts", line: 14, column: 21 },
      { code: "unresolved-tool-name", file: "src/agent.ts", line: 16, column: 13 },
    ]);
    expect(dynamic.warnings[0]!.message).toBe("the tool name `name` of a `tool` call is not a static string");
    expect(dynamic.warnings[1]!.message).toContain("${prefix}.run");
    expect(dynamic.warnings[2]!.help).toMatch(/as const/);
  });
});

describe("manifest_hash", () => {
  it("is SHA-256 over the documented canonical JSON", () => {
    const canonical =
      '{"manifest_version":1,"tools":[{"kind":"mcp","name":"mail.send"},{"kind":"mcp","name":"orders.lookup"},{"kind":"mcp","name":"payments.refund"},{"kind":"mcp","name":"search.web"}]}';
    expect(canonicalManifest(mcp.tools)).toBe(canonical);
    expect(mcp.manifest_hash).toBe(`sha256:${createHash("sha256").update(canonical, "utf8").digest("hex")}`);
  });

  it("does not depend on order, duplicates or where code sits", () => {
    const a = [
      { name: "b.x", kind: "guard" as const },
      { name: "a.y", kind: "mcp" as const },
    ];
    expect(manifestHash(a)).toBe(manifestHash([...a].reverse()));
    expect(manifestHash(a)).toBe(manifestHash([...a, a[0]!]));
    const before = buildManifest(agent("moved-before", { "src/a.ts": 'server.tool("x.one", h);\n' }));
    const after = buildManifest(
      agent("moved-after", { "lib/deeper/b.ts": '\n\n// moved\nexport const s = 1;\nserver.tool("x.one", other);\n' }),
    );
    expect(after.manifest_hash).toBe(before.manifest_hash);
    expect(after.tools[0]!.registrations[0]).toMatchObject({ file: "lib/deeper/b.ts", line: 5 });
  });

  it("changes when a tool is added or registered another way", () => {
    const base = [{ name: "a.y", kind: "mcp" as const }];
    expect(manifestHash([...base, { name: "a.z", kind: "mcp" }])).not.toBe(manifestHash(base));
    expect(manifestHash([{ name: "a.y", kind: "guard" }])).not.toBe(manifestHash(base));
    expect(manifestHash([])).toBe(`sha256:${createHash("sha256").update('{"manifest_version":1,"tools":[]}').digest("hex")}`);
  });
});

describe("reading sources", () => {
  it("resolves constants imported from another file and string unions, and ignores look-alike calls", () => {
    const dir = agent("imports", {
      "src/names.ts": 'export const REFUND = "payments.refund";\nexport type Kind = "a.one" | "a.two";\n',
      "src/main.ts": [
        'import { REFUND, type Kind } from "./names.js";',
        "declare const server: any; declare function guard(...a: unknown[]): void; declare function tool(...a: unknown[]): void;",
        "server.tool(REFUND, () => 1);",
        "export function each(kind: Kind) { server.registerTool(kind, {}, () => 1); }",
        'tool("not.a.registration", () => 1);',
        'server.tool("one.argument.only");',
        'guard("grt_x", "guarded.call", () => 1);',
        'guard("two arguments", () => 1);',
      ].join("\n"),
      "src/types.d.ts": 'declare module "x" { export const y: string }\nserver.tool("in.declarations", h);\n',
      "node_modules/dep/index.ts": 'server.tool("in.dependency", h);\n',
      "dist/out.ts": 'server.tool("in.build.output", h);\n',
    });
    const manifest = buildManifest(dir);
    expect(manifest.tools.map((tool) => `${tool.kind}:${tool.name}`)).toEqual([
      "mcp:a.one",
      "mcp:a.two",
      "guard:guarded.call",
      "mcp:payments.refund",
    ]);
    expect(manifest.files).toEqual(["src/main.ts", "src/names.ts"]);
    expect(manifest.complete).toBe(true);
  });

  it("reports a directory it cannot read instead of throwing", () => {
    const manifest = buildManifest(join(scratch, "does-not-exist"));
    expect(manifest.tools).toEqual([]);
    expect(manifest.complete).toBe(false);
    expect(manifest.warnings[0]).toMatchObject({ code: "unreadable-path" });
  });
});

describe("compareManifest", () => {
  it("reports tools used but not granted and granted entries never used", () => {
    const result = compareManifest(mcp, ["payments.refund", "search.*", "files.delete", "orders.*", "crm.*"]);
    expect(result).toEqual({
      used_not_granted: ["mail.send"],
      granted_not_used: ["crm.*", "files.delete"],
      least_privilege: false,
      complete: true,
    });
  });

  it("finds least privilege when the grant is exactly what the code uses", () => {
    expect(compareManifest(guarded, ["mail.*", "orders.lookup", "payments.refund"])).toMatchObject({
      used_not_granted: [],
      granted_not_used: [],
      least_privilege: true,
    });
  });

  it("never calls an incomplete manifest least privilege", () => {
    expect(compareManifest(dynamic, ["status.check"])).toEqual({
      used_not_granted: [],
      granted_not_used: [],
      least_privilege: false,
      complete: false,
    });
  });

  it("follows the scope rule: `ns.*` covers `ns.` names only", () => {
    const manifest = buildManifest(
      agent("scope", { "a.ts": 'server.tool("pay", h);\nserver.tool("payments", h);\nserver.tool("payments.card.charge", h);\n' }),
    );
    expect(compareManifest(manifest, ["payments.*"])).toMatchObject({ used_not_granted: ["pay", "payments"], granted_not_used: [] });
  });
});

describe("an MCP server on the low-level API", () => {
  it("is reported as dispatching tools at run time, so its manifest is incomplete", () => {
    const manifest = buildManifest(fixture("low-level-agent"));
    expect(manifest.tools).toEqual([]);
    expect(manifest.complete).toBe(false);
    expect(manifest.warnings).toEqual([
      {
        code: "dynamic-tool-dispatch",
        file: "src/server.ts",
        line: 7,
        column: 1,
        message: "`server.setRequestHandler(CallToolRequestSchema, …)` serves tools chosen at run time",
        help: "register each tool with `tool` or `registerTool`, or guard each call with the SDK's `guard`",
      },
    ]);
  });
});

describe("an agent with its own tsconfig.json", () => {
  it("resolves names imported through its path aliases", () => {
    const manifest = buildManifest(fixture("paths-agent"));
    expect(manifest.tools.map((tool) => [tool.name, tool.kind])).toEqual([["export.run", "guard"]]);
    expect(manifest.complete).toBe(true);
  });

  it("falls back to defaults when the tsconfig.json cannot be read, and says so", () => {
    const dir = agent("broken-tsconfig", { "tsconfig.json": "{ not json", "src/a.ts": 'server.tool("a.b", h);\n' });
    const manifest = buildManifest(dir);
    expect(manifest.tools.map((tool) => tool.name)).toEqual(["a.b"]);
    expect(manifest.warnings.map((warning) => warning.code)).toEqual(["tsconfig-ignored"]);
    expect(manifest.complete).toBe(true);
  });
});

describe("JavaScript sources and calls that only look like registrations", () => {
  it("reads .js, .mjs and .cjs files, so a JavaScript agent's tools are listed, not skipped", () => {
    const dir = agent("javascript", {
      "src/server.js":
        'import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";\nconst server = new McpServer({ name: "a", version: "1" });\nconst REFUND = "payments.refund";\nserver.tool(REFUND, {}, async () => ({}));\n',
      "src/more.mjs": 'export function register(server) { server.registerTool("mail.send", {}, async () => ({})); }\n',
      "src/old.cjs": 'module.exports = (server) => server.tool("orders.lookup", {}, () => 1);\n',
      "src/server.test.js": 'server.tool("fake.in.test", {}, () => 1);\n',
    });
    const manifest = buildManifest(dir);
    expect(manifest.tools.map((tool) => tool.name)).toEqual(["mail.send", "orders.lookup", "payments.refund"]);
    expect(manifest.files).toEqual(["src/more.mjs", "src/old.cjs", "src/server.js"]);
    expect(manifest.complete).toBe(true);
  });

  it("counts x.tool(…) only when x may be an MCP server: a receiver known to be something else registers nothing", () => {
    const dir = agent("lookalikes", {
      "src/a.ts": [
        "class Logger { tool(name: string, detail: unknown): void {} }",
        "declare class McpServer { tool(name: string, ...rest: unknown[]): void }",
        "class MyServer extends McpServer {}",
        "const logger = new Logger();",
        'logger.tool("not.a.tool", {});',
        'const table = new Map<string, number>(); (table as any).tool("still.any", 1);',
        'const plain = { tool(name: string, f: unknown) { return name; } }; plain.tool("object.method", 1);',
        'new McpServer().tool("real.tool", () => 1);',
        'new MyServer().tool("subclass.tool", () => 1);',
        'let maybe: McpServer | undefined; maybe!.tool("union.tool", () => 1);',
      ].join("\n"),
    });
    const manifest = buildManifest(dir);
    expect(manifest.tools.map((tool) => tool.name)).toEqual(["real.tool", "still.any", "subclass.tool", "union.tool"]);
  });
});
