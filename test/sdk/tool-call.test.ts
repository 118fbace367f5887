// The governor the framework adapters share: its options checked at their edges, its memory of gated calls bounded, its refusals cut.
import { afterEach, describe, expect, it } from "vitest";
import { AuthorityClient, AuthorityProblemError, TOOL_CALL_LIMITS, toolGovernor, type ToolGovernanceOptions } from "@agent-authority/sdk";
import { sendJson, startRecordingServer, type RecordingServer, TEST_SIGNING_KEYS } from "./recording-server.js";

const grant = "grt_01h00000000000000000000000";
const servers: RecordingServer[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** A platform that gates every authorize with a new ledger id and has no approval for any. */
async function gatingPlatform(reason = "needs the CFO"): Promise<RecordingServer> {
  let next = 0;
  const server = await startRecordingServer((request, response) => {
    if (request.url === "/v1/authorize") {
      next += 1;
      sendJson(response, 200, {
        outcome: "gated",
        ledger_id: `led_${next}`,
        decided_by: "policy",
        reason_code: "policy.gated",
        reason,
        gates: [],
        residual: 'approver in ["cfo@example.com"]',
      });
    } else
      sendJson(
        response,
        404,
        { type: "about:blank", title: "no approval yet", status: 404, code: "approval_not_found" },
        "application/problem+json",
      );
  });
  servers.push(server);
  return server;
}

function client(baseUrl = "http://127.0.0.1:9/v1"): AuthorityClient {
  // The scripted server signs its decisions and settlements as the real one does; the client verifies them.
  return new AuthorityClient({ baseUrl, apiKey: "aa_tool_call", timeoutMs: 2_000, attempts: 1, signingKeys: TEST_SIGNING_KEYS });
}

const base: ToolGovernanceOptions = { grant, namespace: "shop" };

describe("toolGovernor options", () => {
  it("takes the approval wait from 0 to its limit and no further", () => {
    expect(() => toolGovernor(client(), { ...base, approvalWaitMs: 0 })).not.toThrow();
    expect(() => toolGovernor(client(), { ...base, approvalWaitMs: TOOL_CALL_LIMITS.approvalWaitMsMax })).not.toThrow();
    expect(() => toolGovernor(client(), { ...base, approvalWaitMs: TOOL_CALL_LIMITS.approvalWaitMsMax + 1 })).toThrow(RangeError);
    expect(() => toolGovernor(client(), { ...base, approvalWaitMs: -1 })).toThrow(RangeError);
    expect(() => toolGovernor(client(), { ...base, approvalWaitMs: 1.5 })).toThrow(RangeError);
  });

  it("takes the poll interval between its bounds", () => {
    expect(() => toolGovernor(client(), { ...base, approvalPollMs: TOOL_CALL_LIMITS.approvalPollMsMin })).not.toThrow();
    expect(() => toolGovernor(client(), { ...base, approvalPollMs: TOOL_CALL_LIMITS.approvalPollMsMax })).not.toThrow();
    expect(() => toolGovernor(client(), { ...base, approvalPollMs: TOOL_CALL_LIMITS.approvalPollMsMin - 1 })).toThrow(RangeError);
    expect(() => toolGovernor(client(), { ...base, approvalPollMs: TOOL_CALL_LIMITS.approvalPollMsMax + 1 })).toThrow(RangeError);
  });

  it("refuses a namespace or an action that is no action name, and a wildcard above all", () => {
    for (const namespace of ["", "shop.", ".shop", "sh op", "shop.*", "*"])
      expect(() => toolGovernor(client(), { ...base, namespace }), namespace).toThrow(TypeError);
    expect(() => toolGovernor(client(), { ...base, grant: "" })).toThrow(TypeError);
    expect(() => toolGovernor(client(), { ...base, tools: { refund: { action: "shop.*" } } })).toThrow(/no action name/);
    const governor = toolGovernor(client(), base);
    expect(governor.actionOf("refund")).toBe("shop.refund");
    expect(() => governor.actionOf("re*fund")).toThrow(TypeError);
    const longest = "a".repeat(TOOL_CALL_LIMITS.actionCharsMax - "shop.".length);
    expect(governor.actionOf(longest)).toHaveLength(TOOL_CALL_LIMITS.actionCharsMax);
    expect(() => governor.actionOf(`${longest}a`)).toThrow(TypeError);
  });
});

describe("toolGovernor calls", () => {
  it("remembers its last gated calls up to the limit: a remembered call makes no new decision, a forgotten one does", async () => {
    const server = await gatingPlatform();
    const governor = toolGovernor(client(server.baseUrl), { ...base, tools: { refund: { args: (args) => ({ order: args["order"] }) } } });
    const never = (): never => {
      throw new Error("a gated call ran");
    };
    for (let i = 0; i <= TOOL_CALL_LIMITS.pendingApprovalsMax; i += 1) {
      const call = await governor.call("refund", { order: `o-${i}` }, never);
      expect(call).toMatchObject({ ran: false, refusal: { waiting_for_approval: true, ledger_id: `led_${i + 1}` } });
    }
    const authorizes = (): number => server.received.filter((request) => request.url === "/v1/authorize").length;
    expect(authorizes()).toBe(TOOL_CALL_LIMITS.pendingApprovalsMax + 1);
    // The newest is remembered: its approval is read and the same decision answered.
    const newest = await governor.call("refund", { order: `o-${TOOL_CALL_LIMITS.pendingApprovalsMax}` }, never);
    expect(newest).toMatchObject({ ran: false, refusal: { ledger_id: `led_${TOOL_CALL_LIMITS.pendingApprovalsMax + 1}` } });
    expect(authorizes()).toBe(TOOL_CALL_LIMITS.pendingApprovalsMax + 1);
    // The oldest was forgotten: it is decided again.
    await governor.call("refund", { order: "o-0" }, never);
    expect(authorizes()).toBe(TOOL_CALL_LIMITS.pendingApprovalsMax + 2);
  });

  it("reuses an approval only for exactly the call that was gated, arguments the policy does not see included", async () => {
    let next = 0;
    const server = await startRecordingServer((request, response) => {
      if (request.url === "/v1/authorize") {
        next += 1;
        const approved = (JSON.parse(request.body) as { approval_id?: string }).approval_id !== undefined;
        sendJson(
          response,
          200,
          approved
            ? {
                outcome: "allow",
                ledger_id: `led_${next}`,
                decided_by: null,
                reason_code: "allow",
                reason: "approved",
                gates: [],
                approver: "cfo@example.com",
              }
            : {
                outcome: "gated",
                ledger_id: `led_${next}`,
                decided_by: "policy",
                reason_code: "policy.gated",
                reason: "needs the CFO",
                gates: [],
                residual: 'approver in ["cfo@example.com"]',
              },
        );
      } else
        sendJson(response, 200, {
          approval_id: "apv_1",
          ledger_id: "led_1",
          grant_id: grant,
          tool: "shop.refund",
          amount_minor_max: 0,
          approver: "cfo@example.com",
          approved_at: "2026-01-01T00:00:00Z",
          expires_at: "2026-01-01T01:00:00Z",
        });
    });
    servers.push(server);
    const governor = toolGovernor(client(server.baseUrl), { ...base, tools: { refund: { args: (args) => ({ order: args["order"] }) } } });
    const ran: string[] = [];
    const first = await governor.call("refund", { order: "o-1", note: "asked" }, () => ran.push("asked"));
    expect(first).toMatchObject({ ran: false, refusal: { waiting_for_approval: true, ledger_id: "led_1" } });
    const other = await governor.call("refund", { order: "o-1", note: "swapped" }, () => ran.push("swapped"));
    expect(other).toMatchObject({ ran: false, refusal: { waiting_for_approval: true, ledger_id: "led_2" } });
    const same = await governor.call("refund", { order: "o-1", note: "asked" }, () => ran.push("asked"));
    expect(same.ran).toBe(true);
    expect(ran).toEqual(["asked"]);
    const bodies = server.received.filter((r) => r.url === "/v1/authorize").map((r) => JSON.parse(r.body) as { approval_id?: string });
    expect(bodies.map((body) => body.approval_id ?? null)).toEqual([null, null, "apv_1"]);
  });

  it("passes on what the tool throws, a problem of the SDK included, instead of calling it a refusal", async () => {
    const server = await startRecordingServer((_request, response) => {
      sendJson(response, 200, {
        outcome: "allow",
        ledger_id: "led_1",
        decided_by: null,
        reason_code: "allow",
        reason: "allowed",
        gates: [],
      });
    });
    servers.push(server);
    const thrown = new AuthorityProblemError({ type: "about:blank", title: "forbidden", status: 403, code: "forbidden" }, "GET", "/grants");
    await expect(
      toolGovernor(client(server.baseUrl), base).call("lookup", {}, () => {
        throw thrown;
      }),
    ).rejects.toBe(thrown);
  });

  it("cuts a refusal's text to its limit, however long the server's reason", async () => {
    const server = await gatingPlatform("x".repeat(100_000));
    const call = await toolGovernor(client(server.baseUrl), base).call("refund", {}, () => "ran");
    expect(call.ran).toBe(false);
    if (call.ran) return;
    expect(call.refusal.message.length).toBeLessThanOrEqual(TOOL_CALL_LIMITS.refusalCharsMax);
    expect(call.refusal.reason.length).toBeLessThanOrEqual(TOOL_CALL_LIMITS.refusalCharsMax);
  });
});
