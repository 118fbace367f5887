// A dead upstream costs nothing: its calls are refused before any decision, its tools leave the
// list while it is down, it restarts with backoff and is attested again, and a result over the
// transport limit fails only its own call.
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { SERVER_BUILT } from "../server/server-processes.js";
import {
  connectGateway,
  decisionsOf,
  grantNow,
  issueGrant,
  logLine,
  SHIFTING_SERVER,
  textOf,
  useWorld,
  writeConfig,
  until,
} from "./harness.js";

const shift = (extra = ""): string =>
  `upstreams:\n  shift:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(SHIFTING_SERVER)}]\n${extra}`;

describe.skipIf(!SERVER_BUILT)("MCP gateway with an upstream that goes away", () => {
  const world = useWorld("gateway-upstream-down");

  it("refuses a down upstream's calls before authorize: nothing is used, the count budget is kept, its tools leave the list", async () => {
    const grantId = await issueGrant(world(), { scope: { tool: ["shift.*"] }, enforcement_mode: "observe", policy: "uses < 5" });
    const gateway = await connectGateway(world(), writeConfig(world(), grantId, shift("    restart: false\n"), "down.yaml"));
    try {
      let changes = 0;
      gateway.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        changes += 1;
      });
      expect((await gateway.client.listTools()).tools.map((t) => t.name)).toContain("echo");
      expect((await gateway.client.callTool({ name: "crash", arguments: {} })).isError).toBe(true);
      await logLine(gateway.stderr, "upstream closed");
      await until(async () => changes > 0 || undefined);
      expect((await gateway.client.listTools()).tools).toEqual([]);
      for (let i = 0; i < 7; i += 1) {
        const result = await gateway.client.callTool({ name: "echo", arguments: { text: `dead ${i}` } });
        expect(result.isError).toBe(true);
        expect(textOf(result)).toBe("refused: the upstream `shift` of `echo` is down (restarting); nothing was decided or forwarded");
      }
      // Only the crash was decided: seven refused calls held nothing and used nothing.
      expect((await decisionsOf(world(), grantId)).length).toBe(1);
      expect(await grantNow(world(), grantId)).toMatchObject({ uses: 1, held_minor: 0 });
    } finally {
      await gateway.close();
    }
  });

  it("restarts the upstream with backoff, lists its tools again and attests its manifest again", async () => {
    const grantId = await issueGrant(world(), { scope: { tool: ["shift.*"] }, enforcement_mode: "observe" });
    const gateway = await connectGateway(
      world(),
      writeConfig(world(), grantId, shift("    restart:\n      initial_ms: 100\n      max_ms: 2000\n"), "restart.yaml"),
    );
    try {
      const ready = await logLine(gateway.stderr, "gateway ready");
      let changes = 0;
      gateway.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        changes += 1;
      });
      expect((await gateway.client.callTool({ name: "crash", arguments: {} })).isError).toBe(true);
      expect(await logLine(gateway.stderr, "upstream closed")).toMatchObject({ upstream: "shift", restart: true });
      expect(await logLine(gateway.stderr, "upstream restarted")).toMatchObject({ upstream: "shift", tools: 5 });
      // Two changes: the tools left the list, and came back.
      await until(async () => changes >= 2 || undefined);
      expect((await gateway.client.listTools()).tools.map((t) => t.name)).toContain("echo");
      const echoed = await gateway.client.callTool({ name: "echo", arguments: { text: "back" } });
      expect(echoed.isError, textOf(echoed)).toBeFalsy();
      expect(textOf(echoed)).toBe("back");
      // Re-attested: the decision after the restart carries the hash of the list read again (the same tools).
      const decisions = await decisionsOf(world(), grantId);
      expect(decisions.length).toBe(2);
      expect(ready["manifest_hash"]).toMatch(/^sha256:[0-9a-f]{64}$/);
    } finally {
      await gateway.close();
    }
  });

  it("fails only the call whose result is over the transport limit; the upstream keeps running", async () => {
    const grantId = await issueGrant(world(), { scope: { tool: ["shift.*"] }, enforcement_mode: "observe" });
    const gateway = await connectGateway(world(), writeConfig(world(), grantId, shift(), "big.yaml"));
    try {
      const [big, echo] = await Promise.all([
        gateway.client.callTool({ name: "big", arguments: { mib: 11 } }, undefined, { timeout: 60_000 }),
        gateway.client.callTool({ name: "echo", arguments: { text: "beside" } }),
      ]);
      expect(big.isError).toBe(true);
      expect(textOf(big)).toMatch(/^`big` failed in the upstream `shift`: .*over the transport limit of 10485760 bytes/);
      expect(textOf(echo)).toBe("beside");
      const after = await gateway.client.callTool({ name: "echo", arguments: { text: "after" } });
      expect(textOf(after)).toBe("after");
      const small = await gateway.client.callTool({ name: "big", arguments: { mib: 1 } });
      expect(textOf(small).length).toBe(1024 * 1024);
      expect(gateway.stderr()).not.toContain("upstream closed");
    } finally {
      await gateway.close();
    }
  });
});
