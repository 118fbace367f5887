// Webhooks against a real receiving HTTP server: Standard Webhooks signatures verified with the
// `standardwebhooks` package as a receiver would, retries with a short test backoff, a receiver
// down for a while, dead letters and redelivery by hand, pause, resume and delete, the
// per-webhook concurrency bound and the attempt timeout, and URLs refused.

import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, expect, it } from "vitest";
import { retryDelayMs, WEBHOOK_DELIVERY_LIMITS } from "@agent-authority/server";
import { ADMIN_KEY, certifiedAgentId, expectProblem, startTestServer, type TestServer } from "./http-harness.js";
import { startReceiver, type Receiver } from "./webhook-receiver.js";
import { forEachStore, type StoreTarget } from "./targets.js";
import type { Event, WebhookDelivery } from "@agent-authority/sdk";

const SHORT_SCHEDULE = [50, 100, 100, 100, 100, 100, 100, 100];

function webhookSuite(target: StoreTarget): void {
  let t: TestServer;
  let agentId: string;
  let receiver: Receiver;
  beforeAll(async () => {
    t = await startTestServer(target, {
      eventPollMs: 20,
      webhookAllowPrivate: true,
      webhookRetryScheduleMs: SHORT_SCHEDULE,
      webhookAttemptTimeoutMs: 300,
      webhookConcurrency: 2,
    });
    agentId = await certifiedAgentId(t, "webhook-agent");
  });
  afterAll(async () => {
    await t?.close();
  });

  async function subscribe(url: string, types = ["grant.issued"]): Promise<{ id: string; secret: string }> {
    const reply = await t.call("POST", "/webhooks", { key: ADMIN_KEY, body: { url, event_types: types } });
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    return reply.body;
  }

  async function issue(): Promise<string> {
    const reply = await t.call("POST", "/grants", {
      key: ADMIN_KEY,
      body: { agent_id: agentId, principal_type: "human", principal_id: "p@example.com", scope: { tool: ["payments.*"] } },
    });
    expect(reply.status).toBe(201);
    return reply.body.id;
  }

  async function deliveries(webhookId: string): Promise<WebhookDelivery[]> {
    const reply = await t.call("GET", `/webhooks/${webhookId}/deliveries`, { key: ADMIN_KEY });
    expect(reply.status).toBe(200);
    return reply.body.deliveries;
  }

  async function settle(webhookId: string, predicate: (d: WebhookDelivery[]) => boolean): Promise<WebhookDelivery[]> {
    for (let i = 0; i < 400; i += 1) {
      const list = await deliveries(webhookId);
      if (predicate(list)) return list;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`deliveries never settled: ${JSON.stringify(await deliveries(webhookId))}`);
  }

  /** What a receiver does: verify with the package, or throw. */
  function verified(secret: string, received: { headers: Record<string, unknown>; body: string }): Event {
    const headers = {
      "webhook-id": String(received.headers["webhook-id"]),
      "webhook-timestamp": String(received.headers["webhook-timestamp"]),
      "webhook-signature": String(received.headers["webhook-signature"]),
    };
    return new Webhook(secret).verify(received.body, headers) as Event;
  }

  it("delivers each subscribed event once, signed so that a Standard Webhooks receiver verifies it", async () => {
    receiver = await startReceiver();
    try {
      const hook = await subscribe(receiver.url);
      expect(hook.secret).toMatch(/^whsec_/);
      const listed = await t.call("GET", "/webhooks", { key: ADMIN_KEY });
      expect(JSON.stringify(listed.body)).not.toContain(hook.secret);
      const grants = [await issue(), await issue()];
      await receiver.waitFor((r) => r.length >= 2);
      // At least once: an attempt that outlived its (short, in this test) timeout is sent again,
      // always with its webhook-id, on which a receiver deduplicates.
      const byId = new Map(receiver.received.map((r) => [String(r.headers["webhook-id"]), verified(hook.secret, r)]));
      const payloads = [...byId.values()];
      expect(payloads.map((p) => p.subject).sort()).toEqual([...grants].sort());
      expect(payloads[0]).toMatchObject({ type: "grant.issued", data: { agent_id: agentId } });
      // A tampered body or another secret fails verification.
      const first = receiver.received[0]!;
      expect(() => verified(hook.secret, { ...first, body: first.body.replace("grant.issued", "grant.revoked") })).toThrow();
      expect(() => verified(`whsec_${Buffer.alloc(24, 7).toString("base64")}`, first)).toThrow();
      const list = await settle(hook.id, (d) => d.length === 2 && d.every((x) => x.status === "delivered"));
      expect(list.map((d) => d.id).sort()).toEqual([...byId.keys()].sort());
      await t.call("POST", `/webhooks/${hook.id}/delete`, { key: ADMIN_KEY, body: {} });
    } finally {
      await receiver.close();
    }
  });

  it("delivers everything to a receiver that was down for a while, once it is back", async () => {
    receiver = await startReceiver();
    const hook = await subscribe(receiver.url);
    // A redirect is a failed attempt, never followed; then the receiver is down.
    receiver.mode = { status: 307 };
    const grants = [await issue(), await issue(), await issue()];
    await receiver.waitFor((r) => r.length >= 3);
    await settle(hook.id, (d) => d.some((x) => x.last_status === 307 && x.status === "pending"));
    receiver.mode = { status: 503 };
    await receiver.waitFor((r) => r.length >= 6);
    receiver.mode = { status: 200 };
    const list = await settle(hook.id, (d) => d.length === 3 && d.every((x) => x.status === "delivered"));
    expect(list.every((d) => d.attempts >= 2)).toBe(true);
    const delivered = new Set(receiver.received.filter((r) => r.at > 0).map((r) => verified(hook.secret, r).subject));
    expect([...delivered].sort()).toEqual([...grants].sort());
    // Every retry of one delivery carried the same webhook-id: a receiver deduplicates on it.
    const ids = new Map<string, Set<string>>();
    for (const r of receiver.received) {
      const subject = verified(hook.secret, r).subject as string;
      ids.set(subject, (ids.get(subject) ?? new Set()).add(String(r.headers["webhook-id"])));
    }
    expect([...ids.values()].every((set) => set.size === 1)).toBe(true);
    await t.call("POST", `/webhooks/${hook.id}/delete`, { key: ADMIN_KEY, body: {} });
    await receiver.close();
  });

  it("dead-letters after the last retry with an event of its own, and redelivers by hand", async () => {
    receiver = await startReceiver();
    receiver.mode = { status: 500 };
    const hook = await subscribe(receiver.url);
    const watcher = await subscribe(`${receiver.url}/admin`, ["webhook.delivery_dead_lettered"]);
    const before = await t.db.store.eventPath().lastSeq();
    await issue();
    const [dead] = await settle(hook.id, (d) => d.length === 1 && d[0].status === "dead");
    expect(dead.attempts).toBe(SHORT_SCHEDULE.length + 1);
    expect(dead.last_status).toBe(500);
    const letters = (await t.db.store.eventPath().eventsAfter(before, 100)).filter(
      (e) => e.type === "webhook.delivery_dead_lettered" && e.data["webhook_id"] === hook.id,
    );
    expect(letters.map((e) => e.data)).toEqual([
      expect.objectContaining({ webhook_id: hook.id, delivery_id: dead.id, attempts: SHORT_SCHEDULE.length + 1 }),
    ]);
    receiver.mode = { status: 200 };
    // The watcher, on the same receiver, gets the dead letter once the receiver answers again.
    const again = await t.call("POST", `/webhooks/${hook.id}/deliveries/${dead.id}/redeliver`, { key: ADMIN_KEY, body: {} });
    expect(again.status).toBe(200);
    const [redelivered] = await settle(hook.id, (d) => d[0].status === "delivered");
    expect(redelivered.id).toBe(dead.id);
    const last = receiver.received.filter((r) => r.headers["webhook-id"] === dead.id);
    expect(last.length).toBe(SHORT_SCHEDULE.length + 2);
    expectProblem(
      await t.call("POST", `/webhooks/${hook.id}/deliveries/whd_0000000000000000000000000a/redeliver`, { key: ADMIN_KEY, body: {} }),
      404,
      "delivery_not_found",
    );
    for (const id of [hook.id, watcher.id]) await t.call("POST", `/webhooks/${id}/delete`, { key: ADMIN_KEY, body: {} });
    await receiver.close();
  });

  it("holds deliveries while paused, sends them on resume, and nothing after delete", async () => {
    receiver = await startReceiver();
    const hook = await subscribe(receiver.url);
    expect((await t.call("POST", `/webhooks/${hook.id}/pause`, { key: ADMIN_KEY, body: {} })).body.status).toBe("paused");
    expectProblem(await t.call("POST", `/webhooks/${hook.id}/pause`, { key: ADMIN_KEY, body: {} }), 409, "webhook_not_active");
    const grant = await issue();
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received).toEqual([]);
    expect((await t.call("POST", `/webhooks/${hook.id}/resume`, { key: ADMIN_KEY, body: {} })).body.status).toBe("active");
    await receiver.waitFor((r) => r.length === 1);
    expect(verified(hook.secret, receiver.received[0]!).subject).toBe(grant);
    expect((await t.call("POST", `/webhooks/${hook.id}/delete`, { key: ADMIN_KEY, body: {} })).body.status).toBe("deleted");
    await issue();
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received).toHaveLength(1);
    expectProblem(await t.call("GET", `/webhooks/${hook.id}`, { key: ADMIN_KEY }), 404, "webhook_not_found");
    await receiver.close();
  });

  it("keeps at most the concurrency bound in flight to one webhook, and retries an attempt past its timeout", async () => {
    receiver = await startReceiver();
    receiver.delayMs = 150;
    const hook = await subscribe(receiver.url);
    const grants: string[] = [];
    for (let i = 0; i < 6; i += 1) grants.push(await issue());
    await settle(hook.id, (d) => d.length === 6 && d.every((x) => x.status === "delivered"));
    expect(receiver.inFlight.max).toBe(2);
    // A receiver that never answers: each attempt ends at the timeout and is tried again.
    receiver.mode = "hang";
    const slow = await issue();
    await receiver.waitFor((r) => r.filter((x) => verified(hook.secret, x).subject === slow).length >= 2, 10_000);
    const [hung] = (await deliveries(hook.id)).filter((d) => d.status === "pending");
    expect(hung.last_error).toMatch(/no answer within 300 ms/);
    await t.call("POST", `/webhooks/${hook.id}/delete`, { key: ADMIN_KEY, body: {} });
    await receiver.close();
  });

  it("refuses URLs that are not http(s) or carry credentials, and private addresses unless allowed", async () => {
    for (const url of ["ftp://example.com/x", "file:///etc/passwd", "javascript:alert(1)", "not a url", "http://user:pw@example.com/"]) {
      expectProblem(
        await t.call("POST", "/webhooks", { key: ADMIN_KEY, body: { url, event_types: ["grant.issued"] } }),
        422,
        "webhook_url_refused",
      );
    }
    expectProblem(
      await t.call("POST", "/webhooks", { key: ADMIN_KEY, body: { url: "https://example.com", event_types: ["grant.exploded"] } }),
      400,
      "invalid_body",
    );
    const strict = await startTestServer(target, { webhookAllowPrivate: false });
    try {
      for (const url of [
        "http://127.0.0.1:9/x",
        "http://localhost/x",
        "http://[::1]/x",
        "http://169.254.169.254/latest",
        "http://10.0.0.7/",
        "http://192.168.1.1/",
        "http://[::ffff:127.0.0.1]/",
      ]) {
        expectProblem(
          await strict.call("POST", "/webhooks", { key: ADMIN_KEY, body: { url, event_types: ["grant.issued"] } }),
          422,
          "webhook_url_refused",
        );
      }
      expect(
        (
          await strict.call("POST", "/webhooks", {
            key: ADMIN_KEY,
            body: { url: "https://hooks.example.com/in", event_types: ["grant.issued"] },
          })
        ).status,
      ).toBe(201);
    } finally {
      await strict.close();
    }
  });
}

it("retries for at least 24 hours by default, each wait jittered within its bound", () => {
  const schedule = WEBHOOK_DELIVERY_LIMITS.retryScheduleMsDefault;
  const low = schedule.reduce((sum, _w, i) => sum + retryDelayMs(schedule, i + 1, () => 0)!, 0);
  expect(low).toBeGreaterThanOrEqual(24 * 3_600_000);
  expect(retryDelayMs(schedule, schedule.length + 1)).toBeUndefined();
  expect(retryDelayMs([1_000], 1, () => 1)).toBe(1_200);
  expect(retryDelayMs([1_000], 1, () => 0)).toBe(1_000);
});

forEachStore("webhooks", webhookSuite);
