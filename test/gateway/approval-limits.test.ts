// Smaller promises of the gateway: a grant awaiting approval lists nothing, a gated call's wait is
// kept alive by progress that strictly increases, an abandoned wait is logged, and a request over
// the transport limit is refused while the gateway keeps serving.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import type { PendingDecision, PendingDecisionList } from "@agent-authority/sdk";
import { SERVER_BUILT } from "../server/server-processes.js";
import {
  ADMIN_KEY,
  ATTESTATION_BLOCK,
  certify,
  CLI,
  connectGateway,
  filesUpstream,
  get,
  issueGrant,
  KEY_ENV,
  logLine,
  MEMORY_SERVER,
  post,
  textOf,
  useWorld,
  writeConfig,
  until,
  readyField,
} from "./harness.js";

describe.skipIf(!SERVER_BUILT)("gateway: approvals, waits and limits", () => {
  const world = useWorld("gateway-approval-limits");

  it("lists no tools for a grant still awaiting approval", async () => {
    const grantId = await issueGrant(world(), { scope: { tool: ["files.*"] }, enforcement_mode: "observe", require_approval: true });
    expect((await get(world().server.baseUrl, `/grants/${grantId}`, ADMIN_KEY)).status).toBe("pending_approval");
    const gateway = await connectGateway(world(), writeConfig(world(), grantId, `upstreams:\n${filesUpstream(world())}`, "pending.yaml"));
    try {
      expect((await gateway.client.listTools()).tools).toEqual([]);
    } finally {
      await gateway.close();
    }
  });

  it("keeps a host that resets its timeout on progress waiting past that timeout, with strictly increasing progress", async () => {
    const grantId = await issueGrant(world(), { scope: { tool: ["files.*"] }, enforcement_mode: "enforce", policy: "approver != null" });
    const gateway = await connectGateway(
      world(),
      writeConfig(
        world(),
        grantId,
        `${ATTESTATION_BLOCK}approval:\n  wait_seconds: 20\n  poll_ms: 100\nupstreams:\n${filesUpstream(world())}`,
        "wait.yaml",
      ),
    );
    try {
      await certify(world(), await readyField(gateway.stderr, "manifest_hash"));
      const path = join(world().files, "kept-alive.txt");
      const progress: number[] = [];
      // A request timeout of 1.5 s, reset by each progress notification: the wait below is longer.
      const call = gateway.client.callTool({ name: "write_file", arguments: { path, content: "kept" } }, CallToolResultSchema, {
        onprogress: (p) => progress.push(p.progress),
        timeout: 1_500,
        resetTimeoutOnProgress: true,
      });
      const pending = await until(async () =>
        (await get<PendingDecisionList>(world().server.baseUrl, "/decisions/pending", ADMIN_KEY)).decisions.find(
          (d: PendingDecision) => d.grant_id === grantId,
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect((await post(world().server.baseUrl, `/decisions/${pending.ledger_id}/approve`, ADMIN_KEY, {})).status).toBe(201);
      const result = await call;
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(existsSync(path)).toBe(true);
      expect(progress.length).toBeGreaterThan(10);
      for (let i = 1; i < progress.length; i += 1) expect(progress[i]!).toBeGreaterThan(progress[i - 1]!);
    } finally {
      await gateway.close();
    }
  });

  it("logs a wait that ran out as abandoned and tells the approver through the pending queue", async () => {
    const grantId = await issueGrant(world(), { scope: { tool: ["files.*"] }, enforcement_mode: "enforce", policy: "approver != null" });
    const gateway = await connectGateway(
      world(),
      writeConfig(
        world(),
        grantId,
        `${ATTESTATION_BLOCK}approval:\n  wait_seconds: 1\n  poll_ms: 100\nupstreams:\n${filesUpstream(world())}`,
        "abandon.yaml",
      ),
    );
    try {
      await certify(world(), await readyField(gateway.stderr, "manifest_hash"));
      const result = await gateway.client.callTool({
        name: "write_file",
        arguments: { path: join(world().files, "late.txt"), content: "late" },
      });
      expect(textOf(result)).toMatch(/^refused: gated: decision led_\w+ needs a human's approval and none came within 1 s/);
      expect(await logLine(gateway.stderr, "approval wait abandoned")).toMatchObject({ reason: "no approval in time" });
      // The approver is told in the console's queue: the pending decision carries the abandonment.
      const ledgerId = /decision (led_\w+)/.exec(textOf(result))![1]!;
      const pending = await get(world().server.baseUrl, "/decisions/pending?limit=100", ADMIN_KEY);
      const listed = (pending.decisions as PendingDecision[]).find((d) => d.ledger_id === ledgerId)!;
      expect(listed.abandoned).toMatchObject({ ledger_id: ledgerId, grant_id: grantId, reason: "timeout" });
      expect(listed.abandoned?.waited_ms).toBeGreaterThanOrEqual(1_000);
    } finally {
      await gateway.close();
    }
  });

  it("refuses a request over 10 MiB on stdio with an error for its id, and keeps serving", async () => {
    const grantId = await issueGrant(world(), { scope: { tool: ["memory.*"] }, enforcement_mode: "observe" });
    const memory = `upstreams:\n  memory:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(MEMORY_SERVER)}]\n    env:\n      MEMORY_FILE_PATH: ${JSON.stringify(join(world().dir, "big-memory.jsonl"))}\n`;
    const child = spawn(process.execPath, [CLI, "gateway", "--config", writeConfig(world(), grantId, memory, "big.yaml")], {
      env: { PATH: process.env["PATH"] ?? "", [KEY_ENV]: world().agent.key },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk) => {
      out += String(chunk);
    });
    child.stderr.on("data", (chunk) => {
      err += String(chunk);
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    const answer = (id: number) =>
      until(async () =>
        out
          .split("\n")
          .filter((l) => l.startsWith("{"))
          .map((l) => JSON.parse(l))
          .find((m) => m.id === id),
      );
    try {
      await logLine(() => err, "gateway ready");
      child.stdin.write(
        `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } })}\n`,
      );
      await answer(1);
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
      const huge = "x".repeat(11 * 1024 * 1024);
      child.stdin.write(
        `${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "create_entities", arguments: { entities: [{ name: huge, entityType: "t", observations: [] }] } } })}\n`,
      );
      expect((await answer(2)).error).toMatchObject({
        code: -32600,
        message: expect.stringContaining("over the gateway's limit of 10485760 bytes"),
      });
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list" })}\n`);
      expect((await answer(3)).result.tools.length).toBeGreaterThan(0);
      expect(existsSync(join(world().dir, "big-memory.jsonl"))).toBe(false);
      expect(child.exitCode).toBeNull();
    } finally {
      child.stdin.end();
      await exited;
    }
  });
});
