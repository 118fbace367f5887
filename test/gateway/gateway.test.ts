// The gateway against real MCP servers from npm and the real reference server, driven by the MCP SDK's Client.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { GATEWAY_LIMITS } from "@agent-authority/gateway";
import { join } from "node:path";
import { ToolListChangedNotificationSchema, CallToolResultSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import type { KeyCreated, PendingDecision, PendingDecisionList } from "@agent-authority/sdk";
import { SERVER_BUILT } from "../server/server-processes.js";
import {
  ADMIN_KEY,
  ATTESTATION_BLOCK,
  certify,
  connectGateway,
  decisionsOf,
  FILESYSTEM_SERVER,
  filesUpstream,
  get,
  grantNow,
  issueGrant,
  logLine,
  memoryUpstream,
  post,
  SHIFTING_SERVER,
  useWorld,
  textOf,
  upstreamManifestHash,
  writeConfig,
  type Connected,
  type World,
  until,
  readyField,
} from "./harness.js";

/** Runs a gateway on an enforce-mode grant and certifies the agent for the manifest hash it attests. */
async function enforced(
  world: World,
  grant: Record<string, unknown>,
  rest: string,
): Promise<{ gateway: Connected; grantId: string; manifestHash: string }> {
  const grantId = await issueGrant(world, { enforcement_mode: "enforce", ...grant });
  const gateway = await connectGateway(world, writeConfig(world, grantId, `${ATTESTATION_BLOCK}${rest}`, `${grantId}.yaml`));
  const manifestHash = await readyField(gateway.stderr, "manifest_hash");
  await certify(world, manifestHash);
  return { gateway, grantId, manifestHash };
}

function memoryGraph(world: World): string {
  const path = join(world.dir, "memory.jsonl");
  return existsSync(path) ? readFileSync(path, "utf8") : "";
}

const entity = (name: string) => ({ entities: [{ name, entityType: "test", observations: [`seen ${name}`] }] });

describe.skipIf(!SERVER_BUILT)("MCP gateway with real upstreams over stdio", () => {
  const world = useWorld("gateway-agent");

  it("forwards an allowed call (the file is written), holds its amount and settles it", async () => {
    const grantId = await issueGrant(world(), {
      scope: { tool: ["files.write_file"] },
      budget_amount_minor: 1_000,
      budget_currency: "EUR",
      enforcement_mode: "observe",
    });
    const config = writeConfig(
      world(),
      grantId,
      `upstreams:\n${filesUpstream(world())}tools:\n  files.write_file:\n    amount: 250\n    currency: EUR\n    args: [path]\n`,
    );
    const gateway = await connectGateway(world(), config);
    try {
      const path = join(world().files, "allowed.txt");
      const result = await gateway.client.callTool({ name: "write_file", arguments: { path, content: "hello" } });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(readFileSync(path, "utf8")).toBe("hello");
      const [decision] = await decisionsOf(world(), grantId);
      expect(decision.request).toMatchObject({ tool: "files.write_file", amount_minor: 250, currency: "EUR", args: { path } });
      expect(await grantNow(world(), grantId)).toMatchObject({ uses: 1, held_minor: 0, settled_minor: 250 });
    } finally {
      await gateway.close();
    }
  });

  it("forwards in observe mode what enforce would refuse, and logs what enforce would have said", async () => {
    const grantId = await issueGrant(world(), { scope: { tool: ["files.write_file"] }, enforcement_mode: "observe" });
    const gateway = await connectGateway(world(), writeConfig(world(), grantId, `upstreams:\n${filesUpstream(world())}`, "observe.yaml"));
    try {
      expect((await gateway.client.listTools()).tools.map((tool) => tool.name)).toEqual(["write_file"]);
      const result = await gateway.client.callTool({ name: "list_allowed_directories", arguments: {} });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(textOf(result)).toContain(world().files);
      expect(await logLine(gateway.stderr, "decision")).toMatchObject({
        outcome: "allow",
        mode: "observe",
        would_outcome: "deny",
        action: "files.list_allowed_directories",
      });
      expect((await decisionsOf(world(), grantId)).map((d) => [d.outcome, d.would_outcome])).toEqual([["allow", "deny"]]);
    } finally {
      await gateway.close();
    }
  });

  it("attests the same manifest hash as `authority manifest` computes for the upstream's tools", async () => {
    const { gateway, manifestHash } = await enforced(
      world(),
      { scope: { tool: ["files.write_file"] } },
      `upstreams:\n${filesUpstream(world())}`,
    );
    await gateway.close();
    expect(manifestHash).toBe(await upstreamManifestHash("files", process.execPath, [FILESYSTEM_SERVER, world().files]));
  });

  it("lists only the tools in scope and refuses a hidden tool called anyway, without forwarding it", async () => {
    const { gateway, grantId } = await enforced(
      world(),
      { scope: { tool: ["files.write_file"] } },
      `upstreams:\n${filesUpstream(world())}`,
    );
    try {
      const { tools } = await gateway.client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(["write_file"]);
      const hidden = join(world().files, "hidden.txt");
      const refused = await gateway.client.callTool({ name: "edit_file", arguments: { path: hidden, edits: [], dryRun: false } });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/^refused: deny by the scope gate \(scope\.[a-z_]+\): .*`edit_file` was not run \(decision led_/);
      const written = await gateway.client.callTool({ name: "write_file", arguments: { path: hidden, content: "in scope" } });
      expect(written.isError, textOf(written)).toBeFalsy();
      expect((await decisionsOf(world(), grantId)).map((d) => d.outcome)).toEqual(["deny", "allow"]);
    } finally {
      await gateway.close();
    }
  });

  it("runs a count budget out after exactly N calls", async () => {
    const { gateway, grantId } = await enforced(
      world(),
      { scope: { tool: ["memory.*"] }, budget_count: 3 },
      `upstreams:\n${memoryUpstream(world())}`,
    );
    try {
      const texts: string[] = [];
      for (let i = 0; i < 5; i += 1) {
        const result = await gateway.client.callTool({ name: "create_entities", arguments: entity(`budget-${i}`) });
        texts.push(result.isError === true ? textOf(result) : "ok");
      }
      expect(texts.slice(0, 3)).toEqual(["ok", "ok", "ok"]);
      for (const text of texts.slice(3)) expect(text).toMatch(/^refused: exhausted by the budget gate/);
      expect(memoryGraph(world())).toContain("budget-2");
      expect(memoryGraph(world())).not.toContain("budget-3");
      expect(await grantNow(world(), grantId)).toMatchObject({ uses: 3 });
    } finally {
      await gateway.close();
    }
  });

  it("waits for a human to approve a gated call through the API, reporting progress, then runs it", async () => {
    const { gateway, grantId } = await enforced(
      world(),
      { scope: { tool: ["files.*"] }, policy: "approver != null" },
      `approval:\n  wait_seconds: 30\n  poll_ms: 100\nupstreams:\n${filesUpstream(world())}`,
    );
    try {
      const path = join(world().files, "approved.txt");
      const progress: number[] = [];
      const call = gateway.client.callTool({ name: "write_file", arguments: { path, content: "approved" } }, CallToolResultSchema, {
        onprogress: (p) => progress.push(p.progress),
        timeout: 60_000,
      });
      const pending = await until(async () =>
        (await get<PendingDecisionList>(world().server.baseUrl, "/decisions/pending", ADMIN_KEY)).decisions.find(
          (d: PendingDecision) => d.grant_id === grantId,
        ),
      );
      expect(existsSync(path)).toBe(false);
      // The client asked for progress (the SDK sends a progressToken with `onprogress`): it gets some while it waits.
      await until(async () => progress.length > 0 || undefined);
      const approval = await post(world().server.baseUrl, `/decisions/${pending.ledger_id}/approve`, ADMIN_KEY, {});
      expect(approval.status).toBe(201);
      const result = await call;
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(readFileSync(path, "utf8")).toBe("approved");
      const decisions = await decisionsOf(world(), grantId);
      expect(decisions.map((d) => [d.outcome, d.approver])).toEqual([
        ["gated", null],
        ["allow", "admin"],
      ]);
    } finally {
      await gateway.close();
    }
  });

  it("refuses a gated call nobody approved in time, naming the console URL of the decision", async () => {
    const { gateway } = await enforced(
      world(),
      { scope: { tool: ["files.*"] }, policy: "approver != null" },
      `approval:\n  wait_seconds: 1\n  poll_ms: 100\nupstreams:\n${filesUpstream(world())}`,
    );
    try {
      const path = join(world().files, "never.txt");
      const result = await gateway.client.callTool({ name: "write_file", arguments: { path, content: "never" } });
      expect(result.isError).toBe(true);
      const consoleUrl = world().server.baseUrl.replace(/\/v1$/, "/console");
      expect(textOf(result)).toMatch(
        new RegExp(
          `^refused: gated: decision led_\\w+ needs a human's approval and none came within 1 s; a human can approve it at ${consoleUrl.replace(/[.]/g, "\\.")}/#gated/led_\\w+$`,
        ),
      );
      expect(existsSync(path)).toBe(false);
    } finally {
      await gateway.close();
    }
  });

  it("answers a retried call with the same JSON-RPC id from one decision and one run", async () => {
    const { gateway, grantId } = await enforced(world(), { scope: { tool: ["memory.*"] } }, `upstreams:\n${memoryUpstream(world())}`);
    try {
      const answers: JSONRPCMessage[] = [];
      const forward = gateway.transport.onmessage!;
      gateway.transport.onmessage = (message) =>
        "id" in message && message.id === "retried-7" ? void answers.push(message) : forward(message);
      const request: JSONRPCMessage = {
        jsonrpc: "2.0",
        id: "retried-7",
        method: "tools/call",
        params: { name: "create_entities", arguments: entity("retried") },
      };
      await gateway.transport.send(request);
      await gateway.transport.send(request);
      await until(async () => answers.length === 2 || undefined);
      expect(answers[1]).toEqual(answers[0]);
      expect((await decisionsOf(world(), grantId)).length).toBe(1);
      expect(memoryGraph(world()).match(/"retried"/g)?.length).toBe(1);
    } finally {
      await gateway.close();
    }
  });

  it("refuses a JSON-RPC id reused for another call, never answering it with the earlier result", async () => {
    const { gateway, grantId } = await enforced(world(), { scope: { tool: ["memory.*"] } }, `upstreams:\n${memoryUpstream(world())}`);
    try {
      const answers: JSONRPCMessage[] = [];
      const forward = gateway.transport.onmessage!;
      gateway.transport.onmessage = (message) =>
        "id" in message && message.id === "reused-3" ? void answers.push(message) : forward(message);
      const call = (name: string): JSONRPCMessage => ({
        jsonrpc: "2.0",
        id: "reused-3",
        method: "tools/call",
        params: { name: "create_entities", arguments: entity(name) },
      });
      await gateway.transport.send(call("first"));
      await until(async () => answers.length === 1 || undefined);
      await gateway.transport.send(call("second"));
      await until(async () => answers.length === 2 || undefined);
      expect(JSON.stringify(answers[1])).toContain("already used for another call");
      expect(JSON.stringify(answers[1])).toContain('"isError":true');
      expect((await decisionsOf(world(), grantId)).length).toBe(1);
      expect(memoryGraph(world())).not.toContain('"second"');
    } finally {
      await gateway.close();
    }
  });

  it("forgets a large result once answered: a retry after it is refused as already run on the same decision", async () => {
    const { gateway, grantId } = await enforced(
      world(),
      { scope: { tool: ["files.read_text_file"] } },
      `upstreams:\n${filesUpstream(world())}`,
    );
    try {
      const path = join(world().files, "large.txt");
      writeFileSync(path, "z".repeat(GATEWAY_LIMITS.rememberedResultCharsMax));
      const answers: JSONRPCMessage[] = [];
      const forward = gateway.transport.onmessage!;
      gateway.transport.onmessage = (message) =>
        "id" in message && message.id === "large-1" ? void answers.push(message) : forward(message);
      const request: JSONRPCMessage = {
        jsonrpc: "2.0",
        id: "large-1",
        method: "tools/call",
        params: { name: "read_text_file", arguments: { path } },
      };
      await gateway.transport.send(request);
      await until(async () => answers.length === 1 || undefined);
      await gateway.transport.send(request);
      await until(async () => answers.length === 2 || undefined);
      expect(JSON.stringify(answers[1])).toMatch(/refused: `read_text_file` already ran on decision led_\w+ /);
      const logged = gateway
        .stderr()
        .split("\n")
        .filter((line) => line.includes('"msg":"decision"'))
        .map((line) => JSON.parse(line).ledger_id);
      expect(logged.length).toBe(2);
      expect(logged[1]).toBe(logged[0]);
      expect((await decisionsOf(world(), grantId)).length).toBe(1);
    } finally {
      await gateway.close();
    }
  });

  it("refuses in enforce mode once the upstream's tool list changed, because the attested hash changed", async () => {
    const { gateway, grantId } = await enforced(
      world(),
      { scope: { tool: ["shift.*"] } },
      `upstreams:\n  shift:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(SHIFTING_SERVER)}]\n`,
    );
    try {
      let changed = false;
      gateway.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        changed = true;
      });
      expect((await gateway.client.callTool({ name: "echo", arguments: { text: "before" } })).isError).toBeFalsy();
      expect((await gateway.client.callTool({ name: "swap", arguments: {} })).isError).toBeFalsy();
      await until(async () => changed || undefined);
      expect((await gateway.client.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
        "big",
        "bill",
        "crash",
        "echo",
        "exfiltrate",
        "swap",
      ]);
      const after = await gateway.client.callTool({ name: "echo", arguments: { text: "after" } });
      expect(after.isError).toBe(true);
      expect(textOf(after)).toMatch(/^refused: deny by the certification gate \(certification\.attestation_mismatch\)/);
      const decisions = await decisionsOf(world(), grantId);
      expect(decisions.map((d) => d.outcome)).toEqual(["allow", "allow", "deny"]);
      expect(decisions[2].request.attestation.manifest_hash).not.toBe(decisions[0].request.attestation.manifest_hash);
    } finally {
      await gateway.close();
    }
  });

  it("refuses when the server answers 4xx (a revoked key), and lists nothing under a revoked grant", async () => {
    const grantId = await issueGrant(world(), { scope: { tool: ["memory.*"] }, enforcement_mode: "observe" });
    const key = await post<KeyCreated>(world().server.baseUrl, "/keys", ADMIN_KEY, {
      identity: "gateway-agent-second",
      kind: "service",
      roles: ["agent"],
      agent_id: world().agent.id,
    });
    const gateway = await connectGateway(
      world(),
      writeConfig(world(), grantId, `upstreams:\n${memoryUpstream(world())}`, "revoked.yaml"),
      key.body.key,
    );
    try {
      expect((await gateway.client.listTools()).tools.length).toBeGreaterThan(0);
      expect((await post(world().server.baseUrl, `/grants/${grantId}/revoke`, ADMIN_KEY, {})).status).toBe(200);
      expect((await gateway.client.listTools()).tools).toEqual([]);
      const revokedGrant = await gateway.client.callTool({ name: "create_entities", arguments: entity("after-grant-revoked") });
      expect(textOf(revokedGrant)).toMatch(/^refused: deny by the status gate/);
      expect((await post(world().server.baseUrl, `/keys/${key.body.id}/revoke`, ADMIN_KEY, {})).status).toBe(200);
      const revokedKey = await gateway.client.callTool({ name: "create_entities", arguments: entity("after-key-revoked") });
      expect(revokedKey.isError).toBe(true);
      expect(textOf(revokedKey)).toMatch(
        /^refused: `create_entities` was not run because the authority server could not decide \(the authority server refused the request \(401 `unauthenticated`/,
      );
      // The log line of the refusal carries the server's problem code.
      const refusals = gateway
        .stderr()
        .split("\n")
        .filter((line) => line.includes('"msg":"decision"') && line.includes('"ledger_id":null'))
        .map((line) => JSON.parse(line) as { reason_code: string | null });
      expect(refusals.at(-1)?.reason_code).toBe("unauthenticated");
      expect(memoryGraph(world())).not.toContain("after-");
    } finally {
      await gateway.close();
    }
  });

  it("settles the actual cost the tool reports in its result, releasing the rest of the hold", async () => {
    const grantId = await issueGrant(world(), {
      scope: { tool: ["shift.*"] },
      budget_amount_minor: 1_000,
      budget_currency: "EUR",
      enforcement_mode: "observe",
    });
    const gateway = await connectGateway(
      world(),
      writeConfig(
        world(),
        grantId,
        `upstreams:\n  shift:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(SHIFTING_SERVER)}]\ntools:\n  shift.bill:\n    amount: 400\n    currency: EUR\n    cost: /structuredContent/cost_minor\n`,
        "bill.yaml",
      ),
    );
    try {
      const result = await gateway.client.callTool({ name: "bill", arguments: { cost_minor: 120 } });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(await logLine(gateway.stderr, "settled")).toMatchObject({ amount_minor: 120, held_minor: 400, basis: "result" });
      expect(await grantNow(world(), grantId)).toMatchObject({ uses: 1, held_minor: 0, settled_minor: 120 });
    } finally {
      await gateway.close();
    }
  });

  it("answers an error when the upstream crashes mid-call, and releases the hold", async () => {
    const grantId = await issueGrant(world(), {
      scope: { tool: ["shift.*"] },
      budget_amount_minor: 1_000,
      budget_currency: "EUR",
      enforcement_mode: "observe",
    });
    const gateway = await connectGateway(
      world(),
      writeConfig(
        world(),
        grantId,
        `upstreams:\n  shift:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(SHIFTING_SERVER)}]\ntools:\n  shift.crash:\n    amount: 400\n    currency: EUR\n`,
        "crash.yaml",
      ),
    );
    try {
      const result = await gateway.client.callTool({ name: "crash", arguments: {} });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^`crash` failed in the upstream `shift`: .*; its hold was released$/);
      expect(
        await until(async () => {
          const now = await grantNow(world(), grantId);
          return now.settled_minor === 0 && now.held_minor === 0 && (await decisionsOf(world(), grantId)).length === 1 ? now : undefined;
        }),
      ).toMatchObject({ uses: 1, held_minor: 0, settled_minor: 0 });
    } finally {
      await gateway.close();
    }
  });
});

describe.skipIf(!SERVER_BUILT)("MCP gateway when the authority server dies", () => {
  const world = useWorld("gateway-orphan");

  it("refuses every call once the server is killed mid-session, forwarding none", async () => {
    const grantId = await issueGrant(world(), { scope: { tool: ["memory.*"] }, enforcement_mode: "observe" });
    const gateway = await connectGateway(world(), writeConfig(world(), grantId, `upstreams:\n${memoryUpstream(world())}`));
    try {
      expect((await gateway.client.callTool({ name: "create_entities", arguments: entity("alive") })).isError).toBeFalsy();
      world().server.child.kill("SIGKILL");
      await world().server.exited;
      for (const name of ["dead-1", "dead-2", "dead-3"]) {
        const result = await gateway.client.callTool({ name: "create_entities", arguments: entity(name) });
        expect(result.isError).toBe(true);
        expect(textOf(result)).toMatch(
          /^refused: `create_entities` was not run because the authority server could not decide \(platform unavailable \(network\)/,
        );
      }
      expect(memoryGraph(world())).toContain("alive");
      expect(memoryGraph(world())).not.toContain("dead-");
    } finally {
      await gateway.close();
    }
  });
});
