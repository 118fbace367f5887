// guard runs a tool only on allow and settles what the tool reports it spent.
import { afterEach, describe, expect, it } from "vitest";
import { AuthorityClient, AuthorityProblemError } from "@agent-authority/sdk";
import {
  closedPortUrl,
  sendJson,
  settlementAnswer,
  startRecordingServer,
  type RecordingServer,
  TEST_SIGNING_KEYS,
} from "./recording-server.js";

const apiKey = "aa_guard_key";
const grant = "grt_01h00000000000000000000000";
const servers: RecordingServer[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** A platform that decides `outcome` for every authorize and accepts every settle. */
async function platform(outcome: string, settleStatus = 200): Promise<RecordingServer> {
  const server = await startRecordingServer((request, response) => {
    if (request.url === "/v1/authorize") {
      sendJson(response, 200, {
        outcome,
        ledger_id: "led_decision",
        gates: [],
        reason: outcome,
        ...(outcome === "gated" ? { residual: 'approver in ["cfo@example.com"]' } : {}),
      });
    } else if (request.url === "/v1/decisions/led_decision/settle") {
      const body = JSON.parse(request.body) as { amount_minor: number };
      if (settleStatus === 200) sendJson(response, 200, settlementAnswer(request, { amount_minor: body.amount_minor }));
      else
        sendJson(
          response,
          settleStatus,
          { type: "t", title: "conflict", status: settleStatus, code: "settlement_conflict" },
          "application/problem+json",
        );
    } else sendJson(response, 404, { type: "t", title: "no such endpoint", status: 404, code: "route_not_found" });
  });
  servers.push(server);
  return server;
}

function client(baseUrl: string): AuthorityClient {
  // The scripted server signs its decisions and settlements as the real one does; the client verifies them.
  return new AuthorityClient({ baseUrl, apiKey, timeoutMs: 2_000, attempts: 2, retryDelayMs: 10, signingKeys: TEST_SIGNING_KEYS });
}

describe("guard", () => {
  it("runs the tool on allow and settles the amount it actually spent", async () => {
    const server = await platform("allow");
    let ran = 0;
    const result = await client(server.baseUrl).guard(
      grant,
      "payments.refund",
      (decision) => {
        ran += 1;
        expect(decision.ledger_id).toBe("led_decision");
        return { value: "refunded", spent_minor: 1_200 };
      },
      { amount_minor: 1_500, currency: "EUR", args: { order: "4711" } },
    );
    expect(ran).toBe(1);
    expect(result).toMatchObject({
      ran: true,
      value: "refunded",
      settlement: { ledger_id: "led_settlement", amount_minor: 1_200 },
      settle_error: null,
    });
    const [authorize, settle] = server.received;
    expect(JSON.parse(authorize!.body)).toEqual({
      grant_id: grant,
      tool: "payments.refund",
      amount_minor: 1_500,
      currency: "EUR",
      args: { order: "4711" },
      nonce: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
    });
    expect(JSON.parse(settle!.body)).toEqual({ amount_minor: 1_200, nonce: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/) });
    expect(settle!.headers["idempotency-key"]).not.toBe(authorize!.headers["idempotency-key"]);
  });

  it("derives the settlement's idempotency key from a caller's own key", async () => {
    const server = await platform("allow");
    await client(server.baseUrl).guard(grant, "payments.refund", () => ({ value: 1, spent_minor: 3 }), {
      amount_minor: 5,
      currency: "EUR",
      idempotencyKey: "order-9",
    });
    expect(server.received.map((request) => request.headers["idempotency-key"])).toEqual(["order-9", "order-9:settle"]);
  });

  it("settles the whole hold when the tool does not say what it spent", async () => {
    const server = await platform("allow");
    const result = await client(server.baseUrl).guard(grant, "payments.refund", () => ({ value: 1 }), {
      amount_minor: 700,
      currency: "EUR",
    });
    expect(result).toMatchObject({ ran: true, settlement: { amount_minor: 700 } });
  });

  it("does not settle when no amount was held", async () => {
    const server = await platform("allow");
    const result = await client(server.baseUrl).guard(grant, "search.web", async () => ({ value: ["a"] }));
    expect(result).toMatchObject({ ran: true, value: ["a"], settlement: null });
    expect(server.received.map((request) => request.url)).toEqual(["/v1/authorize"]);
  });

  for (const outcome of ["deny", "exhausted", "gated"]) {
    it(`does not run the tool on ${outcome}`, async () => {
      const server = await platform(outcome);
      let ran = false;
      const result = await client(server.baseUrl).guard(
        grant,
        "payments.refund",
        () => {
          ran = true;
          return { value: null };
        },
        { amount_minor: 100, currency: "EUR" },
      );
      expect(ran).toBe(false);
      expect(result).toMatchObject({ ran: false, decision: { outcome } });
      expect(server.received).toHaveLength(1);
    });
  }

  it("does not run the tool when the platform is down", async () => {
    let ran = false;
    const result = await client(await closedPortUrl()).guard(grant, "payments.refund", () => {
      ran = true;
      return { value: null };
    });
    expect(ran).toBe(false);
    expect(result).toMatchObject({ ran: false, decision: { outcome: "deny", unavailable: { cause: "network" } } });
  });

  it("returns the tool's value with the settle error when settling is refused", async () => {
    const server = await platform("allow", 409);
    const result = await client(server.baseUrl).guard(grant, "payments.refund", () => ({ value: "done", spent_minor: 5 }), {
      amount_minor: 10,
      currency: "EUR",
    });
    expect(result.ran).toBe(true);
    if (!result.ran) return;
    expect(result.value).toBe("done");
    expect(result.settle_error).toBeInstanceOf(AuthorityProblemError);
  });

  it("does not settle a tool that threw, and rethrows its error", async () => {
    const server = await platform("allow");
    const failure = await client(server.baseUrl)
      .guard(
        grant,
        "payments.refund",
        () => {
          throw new Error("card network down");
        },
        { amount_minor: 10, currency: "EUR" },
      )
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toBe("card network down");
    expect(server.received.map((request) => request.url)).toEqual(["/v1/authorize"]);
  });

  it("works when taken off the client", async () => {
    const server = await platform("allow");
    const { guard } = client(server.baseUrl);
    const result = await guard(grant, "search.web", () => ({ value: 42 }));
    expect(result).toMatchObject({ ran: true, value: 42 });
  });
});
