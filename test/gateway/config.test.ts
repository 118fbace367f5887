// The gateway configuration: every error at file:line:col, every limit at its edge, pointers per RFC 6901.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CLI } from "./harness.js";
import {
  actionOf,
  buildCatalog,
  GATEWAY_LIMITS,
  handleCall,
  jsonLog,
  type GatewayContext,
  type Session,
  parseGatewayConfig,
  parsePointer,
  pointerText,
  resolvePointer,
  spendOf,
  type ToolMapping,
} from "@agent-authority/gateway";

const GRANT = "grt_01jc0000000000000000000000";
const head = `authority:\n  url: http://127.0.0.1:8080/v1\n  key_env: AGENT_KEY\n  grant_id: ${GRANT}\n`;
const upstream = "upstreams:\n  files:\n    command: npx\n    args: [server-filesystem, /tmp]\n";

function errors(text: string): string[] {
  const result = parseGatewayConfig(text, "gateway.yaml");
  return result.ok ? [] : result.diagnostics.map((d) => `${d.file}:${d.line}:${d.column}: ${d.message}`);
}

function mappingOf(text: string): ToolMapping {
  const result = parseGatewayConfig(`${head}${upstream}tools:\n  files.write_file:\n${text}`, "gateway.yaml");
  if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
  return result.config.tools.get("files.write_file")!;
}

describe("gateway configuration", () => {
  it("verifies answers unless `allow_unsigned_answers: true` says otherwise, which excludes pinned keys and takes only a boolean", () => {
    const opted = parseGatewayConfig(head.replace("authority:\n", "authority:\n  allow_unsigned_answers: true\n") + upstream, "g.yaml");
    expect(opted.ok && opted.config.authority.allowUnsignedAnswers).toBe(true);
    const both = parseGatewayConfig(
      head.replace("authority:\n", "authority:\n  allow_unsigned_answers: true\n  signing_keys: keys.json\n") + upstream,
      "g.yaml",
    );
    expect(both.ok).toBe(false);
    const text = parseGatewayConfig(head.replace("authority:\n", 'authority:\n  allow_unsigned_answers: "yes"\n') + upstream, "g.yaml");
    expect(text.ok).toBe(false);
  });

  it("reads a whole configuration with its defaults", () => {
    const result = parseGatewayConfig(`${head}${upstream}  remote:\n    url: http://127.0.0.1:9000/mcp\n`, "gateway.yaml");
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.config.authority).toEqual({
      url: "http://127.0.0.1:8080/v1",
      keyEnv: "AGENT_KEY",
      grantId: GRANT,
      timeoutMs: 2000,
      attempts: 2,
      consoleUrl: "http://127.0.0.1:8080/console",
      allowUnsignedAnswers: false,
    });
    expect(result.config.approval).toEqual({ waitSeconds: 55, pollMs: 1000 });
    expect(result.config.http).toEqual({ tokenEnv: undefined, sessionIdleSeconds: 300 });
    expect(result.config.upstreams.map((u) => [u.name, u.kind])).toEqual([
      ["files", "stdio"],
      ["remote", "http"],
    ]);
  });

  it("puts every error at the file, line and column of what is wrong", () => {
    expect(errors("authority: [\n")).toEqual([expect.stringMatching(/^gateway\.yaml:2:1: yaml: /)]);
    // Shrunk by the hostile-input property: an alias without its anchor threw instead of reporting.
    expect(errors("*:")).toEqual(["gateway.yaml:1:1: yaml: unresolved alias (the anchor must be set before the alias): :"]);
    const laughs =
      "a: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n";
    expect(errors(laughs)).toEqual(["gateway.yaml:1:1: yaml: excessive alias count indicates a resource exhaustion attack"]);
    expect(errors(`${head}${upstream}`.replace(GRANT, "grant-7"))).toEqual([
      "gateway.yaml:4:13: `authority.grant_id` must be a string matching `^grt_[0-9a-z]{26}$`, not `grant-7`",
    ]);
    expect(errors(`${head}  colour: blue\n${upstream}`)).toEqual([
      expect.stringMatching(/^gateway\.yaml:5:3: unknown key `colour` in `authority`/),
    ]);
    expect(errors(upstream)).toEqual(["gateway.yaml:1:1: the configuration needs `authority` (its `url`, `key_env` and `grant_id`)"]);
    expect(errors(`${head}upstreams:\n  bad.name:\n    command: x\n`)).toEqual([
      expect.stringMatching(/^gateway\.yaml:6:3: the upstream name `bad\.name` must match/),
    ]);
    expect(errors(`${head}upstreams:\n  both:\n    command: x\n    url: http://h/mcp\n`)).toEqual([
      expect.stringMatching(/^gateway\.yaml:7:5: the upstream `both` needs exactly one of/),
    ]);
    expect(errors(`${head}${upstream}tools:\n  files.write_file:\n    amount: /size\n`)).toEqual([
      "gateway.yaml:11:5: `tools.files.write_file` needs both `amount` and `currency`, or neither",
    ]);
    expect(errors(`${head}${upstream}tools:\n  files.write_file:\n    amount: /a~2b\n    currency: EUR\n`)).toContainEqual(
      expect.stringMatching(/^gateway\.yaml:11:13: `tools\.files\.write_file\.amount`: `~` in a JSON Pointer/),
    );
    expect(errors(`${head}${upstream}tools:\n  other.tool: {}\n`)).toEqual([
      expect.stringMatching(/^gateway\.yaml:10:3: `other\.tool` must be `<upstream>\.<tool>`/),
    ]);
    expect(errors(`${head}${upstream}tools:\n  files.write_file:\n    currency: euro\n    amount: 1\n`)).toContainEqual(
      expect.stringMatching(/^gateway\.yaml:11:15: `tools\.files\.write_file\.currency` must be a JSON Pointer/),
    );
  });

  it("refuses an authority URL that is neither https nor loopback unless allowed explicitly", () => {
    const at = (url: string, extra = "") => `authority:\n  url: ${url}\n  key_env: AGENT_KEY\n  grant_id: ${GRANT}\n${extra}${upstream}`;
    for (const url of [
      "https://authority.example.com/v1",
      "http://127.0.0.1:8080/v1",
      "http://127.8.9.10/v1",
      "http://[::1]:8080/v1",
      "http://localhost:8080/v1",
    ])
      expect(errors(at(url)), url).toEqual([]);
    for (const url of [
      "http://authority.example.com/v1",
      "http://10.0.0.5:8080/v1",
      "http://127.0.0.1.example.com/v1",
      "http://localhost.example.com/v1",
    ]) {
      expect(errors(at(url)), url).toEqual([
        expect.stringMatching(/^gateway\.yaml:2:8: `authority\.url` must be https, or http on a loopback address/),
      ]);
    }
    expect(errors(at("http://authority.example.com/v1", "  allow_insecure_http: true\n"))).toEqual([]);
    expect(errors(at("http://authority.example.com/v1", "  allow_insecure_http: yes please\n"))).toContainEqual(
      expect.stringMatching(/`authority\.allow_insecure_http` must be `true` or `false`/),
    );
  });

  it("keeps every limit at its edge", () => {
    const at = (n: number) => `${head}upstreams:\n${Array.from({ length: n }, (_, i) => `  u${i}:\n    command: x\n`).join("")}`;
    expect(errors(at(GATEWAY_LIMITS.upstreamsMax))).toEqual([]);
    expect(errors(at(GATEWAY_LIMITS.upstreamsMax + 1))).toEqual([expect.stringMatching(/`upstreams` must name from 1 to 32/)]);
    const wait = (s: number) => `${head}approval:\n  wait_seconds: ${s}\n${upstream}`;
    expect(errors(wait(GATEWAY_LIMITS.approvalWaitSecondsMax))).toEqual([]);
    expect(errors(wait(GATEWAY_LIMITS.approvalWaitSecondsMax + 1))).toEqual([
      expect.stringMatching(/^gateway\.yaml:6:17: `approval\.wait_seconds` must be an integer from 0 to 86400/),
    ]);
    const args = (n: number) =>
      `${head}${upstream}tools:\n  files.write_file:\n    args: [${Array.from({ length: n }, (_, i) => `a${i}`).join(", ")}]\n`;
    expect(errors(args(GATEWAY_LIMITS.policyArgsMax))).toEqual([]);
    expect(errors(args(GATEWAY_LIMITS.policyArgsMax + 1))).toEqual([expect.stringMatching(/passes at most 64 arguments/)]);
    const tools = (n: number) => `${head}${upstream}tools:\n${Array.from({ length: n }, (_, i) => `  files.t${i}: {}\n`).join("")}`;
    expect(errors(tools(GATEWAY_LIMITS.mappedToolsMax))).toEqual([]);
    expect(errors(tools(GATEWAY_LIMITS.mappedToolsMax + 1))).toEqual([expect.stringMatching(/`tools` maps at most 1024 tools/)]);
    expect(errors(`${head}${upstream}${" ".repeat(GATEWAY_LIMITS.configBytesMax)}`)).toEqual([
      expect.stringMatching(/larger than 262144 bytes/),
    ]);
    const restart = (text: string) => `${head}${upstream}    restart: ${text}\n`;
    const upstreamOf = (text: string) => {
      const r = parseGatewayConfig(restart(text), "gateway.yaml");
      return r.ok ? r.config.upstreams[0] : undefined;
    };
    expect(upstreamOf("false")?.restart).toBeUndefined();
    expect(upstreamOf("true")?.restart).toEqual({ initialMs: 250, maxMs: 30_000 });
    expect(upstreamOf(`{initial_ms: ${GATEWAY_LIMITS.restartInitialMsMin}, max_ms: ${GATEWAY_LIMITS.restartMsMax}}`)?.restart).toEqual({
      initialMs: 10,
      maxMs: 600_000,
    });
    expect(errors(restart(`{initial_ms: ${GATEWAY_LIMITS.restartInitialMsMin - 1}}`))).toEqual([
      expect.stringMatching(/^gateway\.yaml:9:27: `upstreams\.files\.restart\.initial_ms` must be an integer from 10 to 600000/),
    ]);
    expect(errors(restart(`{max_ms: ${GATEWAY_LIMITS.restartMsMax + 1}}`))).toEqual([
      expect.stringMatching(/`upstreams\.files\.restart\.max_ms` must be an integer from 10 to 600000/),
    ]);
    const idle = (n: number) => `${head}http:\n  token_env: LISTEN_TOKEN\n  session_idle_seconds: ${n}\n${upstream}`;
    expect(errors(idle(GATEWAY_LIMITS.httpSessionIdleSecondsMin))).toEqual([]);
    expect(errors(idle(GATEWAY_LIMITS.httpSessionIdleSecondsMax))).toEqual([]);
    expect(errors(idle(GATEWAY_LIMITS.httpSessionIdleSecondsMin - 1))).toEqual([
      expect.stringMatching(/`http\.session_idle_seconds` must be an integer from 1 to 86400/),
    ]);
    expect(errors(idle(GATEWAY_LIMITS.httpSessionIdleSecondsMax + 1))).toEqual([
      expect.stringMatching(/`http\.session_idle_seconds` must be an integer from 1 to 86400/),
    ]);
    expect(errors(`${head}upstreams:\n  files:\n    command: x\n    token_env: T\n`)).toEqual([
      expect.stringMatching(/`token_env` is for a `url` upstream/),
    ]);
    expect(errors(restart("{initial_ms: 500, max_ms: 100}"))).toEqual([
      expect.stringMatching(/`max_ms` \(100\) must be at least `initial_ms` \(500\)/),
    ]);
  });

  it("maps a call to an action: pointer or constant amounts, named arguments, refusing what does not fit", () => {
    const mapping = mappingOf(
      "    tool: fs.write\n    amount: /cost/minor\n    currency: /cost/currency\n    args:\n      where: /path\n    cost: /structuredContent/spent\n",
    );
    expect(actionOf("fs.write", mapping, { path: "/tmp/a", cost: { minor: 120, currency: "EUR" } })).toEqual({
      ok: true,
      heldMinor: 120,
      body: { tool: "fs.write", amount_minor: 120, currency: "EUR", args: { where: "/tmp/a" } },
    });
    expect(actionOf("fs.write", mapping, { cost: { minor: -1, currency: "EUR" } })).toMatchObject({
      ok: false,
      reason: "the amount at `/cost/minor` is not a non-negative integer in minor units",
    });
    expect(actionOf("fs.write", mapping, { cost: { minor: 1, currency: "eur" } })).toMatchObject({ ok: false });
    expect(actionOf("fs.write", mappingOf("    args: [path, mode]\n"), { path: "p", content: "secret" })).toEqual({
      ok: true,
      heldMinor: 0,
      body: { tool: "fs.write", args: { path: "p" } },
    });
    expect(spendOf(mapping, 120, { structuredContent: { spent: 80 } }, false)).toEqual({ amountMinor: 80, basis: "result" });
    expect(spendOf(mapping, 120, { structuredContent: { spent: 500 } }, false)).toEqual({ amountMinor: 120, basis: "capped" });
    expect(spendOf(mapping, 120, { content: [] }, false)).toEqual({ amountMinor: 120, basis: "held" });
    expect(spendOf(mapping, 120, undefined, true)).toEqual({ amountMinor: 0, basis: "failed" });
  });
});

describe("authority gateway on the command line", () => {
  const run = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [CLI, "gateway", ...args], {
      encoding: "utf8",
      env: { PATH: process.env["PATH"] ?? "", ...env },
      input: "",
    });

  it("reports every configuration error at file:line:col and exits 1; usage errors exit 2", () => {
    const dir = mkdtempSync(join(tmpdir(), "authority-gateway-cli-"));
    try {
      const bad = join(dir, "bad.yaml");
      writeFileSync(bad, `${head.replace("AGENT_KEY", "1X")}${upstream}`);
      const checked = run(["--config", bad]);
      expect([checked.status, checked.stderr]).toEqual([
        1,
        `${bad}:3:12: error: \`authority.key_env\` must be a string matching \`^[A-Za-z_][A-Za-z0-9_]{0,127}$\`, not \`1X\`\n`,
      ]);
      expect(run([]).status).toBe(2);
      expect(run(["--config", join(dir, "missing.yaml")]).status).toBe(2);
      const good = join(dir, "good.yaml");
      writeFileSync(good, `${head}${upstream}`);
      expect(run(["--config", good]).stderr).toContain("the agent's key is read from `AGENT_KEY`, which is not set");
      expect(run(["--config", good, "--listen", "nowhere"]).stderr).toContain("`--listen` is HOST:PORT");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("JSON Pointer", () => {
  it("resolves RFC 6901's examples", () => {
    const doc = { foo: ["bar", "baz"], "": 0, "a/b": 1, "m~n": 8 };
    expect(resolvePointer(doc, parsePointer("/foo/1", 32) as string[])).toBe("baz");
    expect(resolvePointer(doc, parsePointer("/a~1b", 32) as string[])).toBe(1);
    expect(resolvePointer(doc, parsePointer("/m~0n", 32) as string[])).toBe(8);
    expect(resolvePointer(doc, parsePointer("/", 32) as string[])).toBe(0);
    expect(resolvePointer(doc, parsePointer("/foo/01", 32) as string[])).toBeUndefined();
    expect(resolvePointer(doc, parsePointer("/constructor", 32) as string[])).toBeUndefined();
  });

  it("writes back what it parsed, for any hostile token text, within the token limit", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "binary" }), { maxLength: GATEWAY_LIMITS.pointerTokensMax }), (tokens) => {
        const text = pointerText(tokens);
        expect(parsePointer(text, GATEWAY_LIMITS.pointerTokensMax)).toEqual(tokens);
        const nested = tokens.reduceRight<unknown>((inner, token) => ({ [token]: inner }), "leaf");
        expect(resolvePointer(nested, tokens)).toBe("leaf");
      }),
    );
    expect(parsePointer("/a".repeat(GATEWAY_LIMITS.pointerTokensMax + 1), GATEWAY_LIMITS.pointerTokensMax)).toBe(
      "a JSON Pointer has at most 32 tokens",
    );
  });
});

describe("a session's memory of its calls", () => {
  it("keeps at most the limit of calls, forgetting the oldest, and cuts a long refusal", async () => {
    const lines: string[] = [];
    const log = jsonLog((line) => void lines.push(line));
    const parsed = parseGatewayConfig(`${head}${upstream}`, "gateway.yaml");
    if (!parsed.ok) throw new Error("the configuration is valid");
    // No upstream is connected, so no tool exists and nothing reaches the authority server.
    const ctx = { config: parsed.config, log, catalog: () => buildCatalog([], parsed.config.tools, log) } as unknown as GatewayContext;
    const session: Session = { id: "s", calls: new Map() };
    const call = (requestId: number, name = "nothing") =>
      handleCall(ctx, session, { name, args: {}, requestId, signal: new AbortController().signal, progress: undefined });
    const first = call(0);
    for (let id = 1; id < GATEWAY_LIMITS.rememberedCallsMax; id += 1) await call(id);
    expect(session.calls.size).toBe(GATEWAY_LIMITS.rememberedCallsMax);
    expect(call(0)).toBe(first);
    await call(GATEWAY_LIMITS.rememberedCallsMax);
    expect(session.calls.size).toBe(GATEWAY_LIMITS.rememberedCallsMax);
    expect(call(0)).not.toBe(first);
    const long = await call(-1, "x".repeat(3 * GATEWAY_LIMITS.refusalCharsMax));
    const text = (long.content[0] as { text: string }).text;
    expect([text.length, text.endsWith("...")]).toEqual([GATEWAY_LIMITS.refusalCharsMax, true]);
  });
});
