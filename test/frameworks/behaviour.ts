// One behaviour suite for every framework adapter, run by each framework's own agent loop against a real server.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuthorityClient, type ToolDecisionEvent, type ToolGovernanceOptions } from "@agent-authority/sdk";
import { FORGERIES, startAttackingProxy } from "../sdk/attacks.js";
import { closedPortUrl, startRecordingServer, type RecordingServer } from "../sdk/recording-server.js";
import { runOnce, type Driver, type TestTool, type ToolArgs } from "./drivers.js";
import { ATTESTATION, startPlatform, type Platform } from "./platform.js";

/** A tool that counts its runs and reports what it refunded: 100 less than it was asked for. */
function counted(name: string): TestTool & { runs: ToolArgs[] } {
  const runs: ToolArgs[] = [];
  return {
    name,
    runs,
    run: (args) => {
      runs.push(args);
      return { order: args.order, refunded_minor: Math.max(0, args.amount_minor - 100) };
    },
  };
}

/** Per tool: the amount comes from `amount_minor` in EUR, the policy sees `order`, the cost is `refunded_minor`. */
const refundMapping = {
  amount: (args: Readonly<Record<string, unknown>>) => ({ amount_minor: args["amount_minor"], currency: "EUR" }),
  args: (args: Readonly<Record<string, unknown>>) => ({ order: args["order"] }),
  cost: (result: unknown) => (result as { refunded_minor?: unknown }).refunded_minor,
};

async function eventually<T>(read: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("not within the time allowed");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export function describeAdapter(driver: Driver): void {
  describe(`the ${driver.framework} adapter against a real server`, () => {
    let platform: Platform;
    const faulty: RecordingServer[] = [];

    beforeAll(async () => {
      platform = await startPlatform();
    });
    afterAll(async () => {
      await Promise.all(faulty.map((server) => server.close()));
      await platform?.close();
    });

    const options = (grant: string, extra: Partial<ToolGovernanceOptions> = {}): ToolGovernanceOptions => ({
      grant,
      namespace: "shop",
      tools: { refund: refundMapping },
      ...extra,
    });

    it("runs an allowed call once, gives the model its result and seals the decision as `shop.<tool>`", async () => {
      const grant = await platform.grant();
      const lookup = counted("lookup");
      const events: ToolDecisionEvent[] = [];
      const received = await runOnce(
        driver,
        platform.agent,
        { grant: grant.id, namespace: "shop", onDecision: (e) => events.push(e) },
        [lookup],
        { tool: "lookup", args: { order: "o-1", amount_minor: 0 } },
      );
      expect(lookup.runs).toEqual([{ order: "o-1", amount_minor: 0 }]);
      expect(received).toEqual({ order: "o-1", refunded_minor: 0 });
      const records = await platform.ledger(grant.id);
      expect(records.map((r) => [r.kind, r.outcome, r.request?.["tool"]])).toEqual([["decision", "allow", "shop.lookup"]]);
      expect(events).toMatchObject([
        { tool: "lookup", action: "shop.lookup", outcome: "allow", ledger_id: records[0]!.ledger_id, ran: true },
      ]);
    });

    it("never runs a refused call; the model receives the outcome, the gate and the reason", async () => {
      const grant = await platform.grant();
      const refund = counted("refund");
      const received = await runOnce(driver, platform.agent, options(grant.id), [refund], {
        tool: "refund",
        args: { order: "blocked", amount_minor: 10 },
      });
      expect(refund.runs).toEqual([]);
      const [record] = await platform.ledger(grant.id);
      expect(record).toMatchObject({ outcome: "deny", decided_by: "policy", request: { tool: "shop.refund", args: { order: "blocked" } } });
      expect(received).toMatchObject({
        refused: true,
        outcome: "deny",
        gate: "policy",
        reason_code: record!.reason_code,
        reason: record!.reason,
        ledger_id: record!.ledger_id,
        waiting_for_approval: false,
      });
      expect((received as { message: string }).message).toContain("refused: deny by the policy gate");
    });

    it("maps a tool outside the grant's scope to a scope refusal, and a per-tool action into it", async () => {
      const grant = await platform.grant();
      const lookup = counted("lookup");
      const outside = await runOnce(driver, platform.agent, { grant: grant.id, namespace: "admin" }, [lookup], {
        tool: "lookup",
        args: { order: "o-2", amount_minor: 0 },
      });
      expect(outside).toMatchObject({ refused: true, outcome: "deny", gate: "scope" });
      expect(lookup.runs).toEqual([]);
      const mapped = await runOnce(
        driver,
        platform.agent,
        { grant: grant.id, namespace: "admin", tools: { lookup: { action: "shop.orders.find" } } },
        [lookup],
        { tool: "lookup", args: { order: "o-2", amount_minor: 0 } },
      );
      expect(mapped).toEqual({ order: "o-2", refunded_minor: 0 });
      expect((await platform.ledger(grant.id)).map((r) => [r.request?.["tool"], r.outcome])).toEqual([
        ["admin.lookup", "deny"],
        ["shop.orders.find", "allow"],
      ]);
    });

    it("holds the amount taken from the arguments and settles what the tool reports", async () => {
      const grant = await platform.grant();
      const refund = counted("refund");
      const received = await runOnce(driver, platform.agent, options(grant.id), [refund], {
        tool: "refund",
        args: { order: "o-3", amount_minor: 900 },
      });
      expect(received).toEqual({ order: "o-3", refunded_minor: 800 });
      expect(refund.runs).toHaveLength(1);
      const records = await platform.ledger(grant.id);
      expect(records.map((r) => r.kind)).toEqual(["decision", "settlement"]);
      expect(records[0]).toMatchObject({ outcome: "allow", request: { tool: "shop.refund", amount_minor: 900, currency: "EUR" } });
      expect(records[1]!.settlement).toMatchObject({ decision_ledger_id: records[0]!.ledger_id, amount_minor: 800 });
      expect(await platform.admin.grants.get(grant.id)).toMatchObject({ settled_minor: 800, held_minor: 0 });
    });

    it("answers a gated call with `waiting for approval` and its decision id, and runs the same call once a human approved", async () => {
      const grant = await platform.grant();
      const refund = counted("refund");
      // The tools are governed once and run twice, as an application keeps them.
      const governed = driver.govern(platform.agent, options(grant.id), [refund]);
      const waiting = await governed({ tool: "refund", args: { order: "o-4", amount_minor: 2_500 } });
      expect(refund.runs).toEqual([]);
      const [gated] = await platform.ledger(grant.id);
      expect(gated).toMatchObject({ outcome: "gated", decided_by: "policy" });
      expect(waiting).toMatchObject({
        refused: true,
        outcome: "gated",
        gate: "policy",
        waiting_for_approval: true,
        ledger_id: gated!.ledger_id,
        approvable_by: gated!.residual,
      });
      expect((waiting as { message: string }).message).toMatch(/^waiting for approval: .*decision led_/);
      await platform.approver.decisions.approve(gated!.ledger_id, { note: "customer called" });
      const after = await governed({ tool: "refund", args: { order: "o-4", amount_minor: 2_500 } });
      expect(after).toEqual({ order: "o-4", refunded_minor: 2_400 });
      expect(refund.runs).toHaveLength(1);
      expect((await platform.ledger(grant.id)).filter((r) => r.kind === "decision").map((r) => [r.outcome, r.approver ?? null])).toEqual([
        ["gated", null],
        ["allow", "cfo@example.com"],
      ]);
    });

    it("waits for the approval when asked to, runs the call under it, and stops waiting at the bound", async () => {
      const grant = await platform.grant();
      const refund = counted("refund");
      const approving = eventually(async () => (await platform.ledger(grant.id)).find((r) => r.outcome === "gated")).then((gated) =>
        platform.approver.decisions.approve(gated.ledger_id),
      );
      const received = await runOnce(driver, platform.agent, options(grant.id, { approvalWaitMs: 30_000, approvalPollMs: 100 }), [refund], {
        tool: "refund",
        args: { order: "o-5", amount_minor: 3_000 },
      });
      await approving;
      expect(received).toEqual({ order: "o-5", refunded_minor: 2_900 });
      expect(refund.runs).toHaveLength(1);
      const bounded = await runOnce(driver, platform.agent, options(grant.id, { approvalWaitMs: 300, approvalPollMs: 100 }), [refund], {
        tool: "refund",
        args: { order: "o-6", amount_minor: 3_000 },
      });
      expect(bounded).toMatchObject({ outcome: "gated", waiting_for_approval: true });
      expect(refund.runs).toHaveLength(1);
    });

    /** A real HTTP server that answers every authorize the same broken way. */
    async function broken(status: number, body: string, contentType = "application/json"): Promise<string> {
      const server = await startRecordingServer((_request, response) => {
        response.writeHead(status, { "content-type": contentType });
        response.end(body);
      });
      faulty.push(server);
      return server.baseUrl;
    }

    const failures: [string, () => Promise<string>, RegExp][] = [
      ["the server is down", () => closedPortUrl(), /platform unavailable \(network\)/],
      [
        "the server answers 503",
        () => broken(503, JSON.stringify({ type: "about:blank", title: "down", status: 503 }), "application/problem+json"),
        /platform unavailable \(server_error\)/,
      ],
      ["the server answers garbage", () => broken(200, "<html>not a decision"), /platform unavailable \(unreadable_response\)/],
      [
        "the server answers an allow without a sealed record",
        () => broken(200, JSON.stringify({ outcome: "allow", gates: [] })),
        /platform unavailable \(unreadable_response\)/,
      ],
      [
        // The client below names no signing keys: verifying is the default (decision 0623).
        "whatever answers at the URL makes up an allow that names a record, with no signing configuration at all",
        () => broken(200, JSON.stringify({ outcome: "allow", ledger_id: "led_forged", gates: [], reason: "trust me" })),
        /platform unavailable \(unverified_answer\)/,
      ],
    ];
    for (const [what, baseUrl, reason] of failures) {
      it(`refuses the call when ${what}`, async () => {
        const client = new AuthorityClient({
          baseUrl: await baseUrl(),
          apiKey: "aa_agent",
          timeoutMs: 2_000,
          attempts: 2,
          retryDelayMs: 10,
          attestation: ATTESTATION,
        });
        const refund = counted("refund");
        const received = await runOnce(driver, client, options("grt_01h00000000000000000000000"), [refund], {
          tool: "refund",
          args: { order: "o-7", amount_minor: 10 },
        });
        expect(refund.runs).toEqual([]);
        expect(received).toMatchObject({ refused: true, outcome: "deny", gate: null, ledger_id: null, waiting_for_approval: false });
        expect((received as { reason: string }).reason).toMatch(reason);
      });
    }

    it("in its default configuration, refuses every forgery of an attacker on the path and never runs the tool", async () => {
      const proxy = await startAttackingProxy(platform.baseUrl);
      try {
        // No signing configuration: the client fetches the server's keys once, through the same path.
        const client = new AuthorityClient({
          baseUrl: proxy.baseUrl,
          apiKey: platform.agentKey,
          attestation: ATTESTATION,
          timeoutMs: 5_000,
        });
        const grant = await platform.grant();
        const refund = counted("refund");
        const governed = driver.govern(client, options(grant.id), [refund]);
        expect(await governed({ tool: "refund", args: { order: "o-10", amount_minor: 10 } })).toEqual({ order: "o-10", refunded_minor: 0 });
        expect(proxy.hasRecordedAllow).toBe(true);
        for (const attack of FORGERIES) {
          proxy.attack = attack;
          const received = await governed({ tool: "refund", args: { order: "blocked", amount_minor: 10 } });
          expect(received, attack).toMatchObject({ refused: true, outcome: "deny", ledger_id: null });
          expect((received as { reason: string }).reason, attack).toMatch(/unverified_answer/);
        }
        expect(refund.runs).toHaveLength(1);
      } finally {
        await proxy.close();
      }
    });

    it("refuses the call when the server rejects the request itself (an unknown key)", async () => {
      const client = new AuthorityClient({
        baseUrl: platform.baseUrl,
        apiKey: "aa_not_a_key_of_this_server_0000000000",
        timeoutMs: 2_000,
        attempts: 1,
      });
      const refund = counted("refund");
      const received = await runOnce(driver, client, options("grt_01h00000000000000000000000"), [refund], {
        tool: "refund",
        args: { order: "o-8", amount_minor: 10 },
      });
      expect(refund.runs).toEqual([]);
      expect(received).toMatchObject({ refused: true, outcome: "deny", gate: null, ledger_id: null });
      expect((received as { reason: string }).reason).toContain("401");
    });

    it("refuses, before any decision, a call whose amount cannot be read from its arguments", async () => {
      const grant = await platform.grant();
      const refund = counted("refund");
      const received = await runOnce(
        driver,
        platform.agent,
        { grant: grant.id, namespace: "shop", tools: { refund: { amount: () => ({ amount_minor: 1.5, currency: "EUR" }) } } },
        [refund],
        { tool: "refund", args: { order: "o-9", amount_minor: 10 } },
      );
      expect(received).toMatchObject({ refused: true, outcome: "deny", ledger_id: null });
      expect(refund.runs).toEqual([]);
      expect(await platform.ledger(grant.id)).toEqual([]);
    });
  });
}
