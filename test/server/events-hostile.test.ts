// Hostile input at the events' trust boundaries: any `Last-Event-ID`, `?types=`, `?after=` and any
// webhook URL gets a clear answer (never a 5xx or a hang), a webhook is only ever created for an
// http(s) URL, and the private-address check runs again on the address a name resolves to.

import { lookup } from "node:dns/promises";
import { hostname } from "node:os";
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ADMIN_KEY, startTestServer, type TestServer } from "./http-harness.js";
import { openStream } from "./sse-client.js";
import { startReceiver } from "./webhook-receiver.js";
import { forEachStore, type StoreTarget } from "./targets.js";
import type { WebhookDelivery } from "@agent-authority/sdk";

/** Header-safe text: visible ASCII and spaces, which fetch and node:http both send as given. */
const headerText = fc.string({ unit: fc.constantFrom(..."0123456789 abc,.-_:/+%x\\\"'<>{}".split("")), maxLength: 40 });

function hostileSuite(target: StoreTarget): void {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(target, { eventPollMs: 20, webhookAllowPrivate: false });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("answers any Last-Event-ID, `types` and `after` with 200 or a 4xx problem", async () => {
    await fc.assert(
      fc.asyncProperty(headerText, headerText, headerText, async (lastId, types, after) => {
        const query = `?types=${encodeURIComponent(types)}&after=${encodeURIComponent(after)}`;
        const stream = await openStream(t.baseUrl, ADMIN_KEY, query, lastId.trim() === "" ? {} : { "last-event-id": lastId });
        stream.close();
        expect([200, 400, 403]).toContain(stream.status);
        if (stream.status !== 200) expect(stream.problem?.code).toMatch(/^(invalid_query|invalid_last_event_id|forbidden)$/);
      }),
      { numRuns: 60, seed: 3602 },
    );
  });

  it("creates a webhook only for an http(s) URL, and answers anything else with a 4xx problem", async () => {
    const before = (await t.call("GET", "/webhooks", { key: ADMIN_KEY })).body.webhooks.length;
    let created = 0;
    const url = fc.oneof(
      fc.string({ maxLength: 80 }),
      fc.webUrl(),
      fc.constantFrom("gopher://x", "data:text/plain,hi", "http://[::1", "https://%zz", "HTTP://EXAMPLE.COM/"),
    );
    await fc.assert(
      fc.asyncProperty(url, async (raw) => {
        const reply = await t.call("POST", "/webhooks", { key: ADMIN_KEY, body: { url: raw, event_types: ["grant.issued"] } });
        expect(reply.status, JSON.stringify(reply.body)).toBeLessThan(500);
        if (reply.status === 201) {
          created += 1;
          expect(new URL(reply.body.url).protocol).toMatch(/^https?:$/);
          await t.call("POST", `/webhooks/${reply.body.id}/delete`, { key: ADMIN_KEY, body: {} });
        } else {
          expect([400, 422]).toContain(reply.status);
        }
      }),
      { numRuns: 80, seed: 3603 },
    );
    expect(created).toBeGreaterThan(0);
    expect((await t.call("GET", "/webhooks", { key: ADMIN_KEY })).body.webhooks).toHaveLength(before);
  });

  it("answers a replay of a webhook's creation without its secret", async () => {
    const send = () =>
      fetch(`${t.baseUrl}/webhooks`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json", "idempotency-key": "hook-once" },
        body: JSON.stringify({ url: "https://hooks.example.com/in", event_types: ["grant.issued"] }),
      });
    const first = await send();
    expect(first.status).toBe(201);
    const secret = (await first.json()).secret as string;
    const again = await send();
    const text = await again.text();
    expect(again.status).toBe(409);
    expect(JSON.parse(text).code).toBe("key_secret_shown_once");
    expect(text).not.toContain(secret);
  });

  it("refuses at delivery a name that resolves to a private address", async () => {
    const name = hostname();
    const resolved = await lookup(name).catch(() => undefined);
    if (resolved === undefined || !/^(127\.|::1$)/.test(resolved.address)) return; // this machine's name is not loopback
    const receiver = await startReceiver();
    try {
      const port = new URL(receiver.url).port;
      const hook = await t.call("POST", "/webhooks", {
        key: ADMIN_KEY,
        body: { url: `http://${name}:${port}/hook`, event_types: ["grant.issued"] },
      });
      expect(hook.status).toBe(201);
      const agent = await t.call("POST", "/agents", { key: ADMIN_KEY, body: { name: "resolved-agent" } });
      await t.call("POST", "/grants", {
        key: ADMIN_KEY,
        body: { agent_id: agent.body.id, principal_type: "human", principal_id: "p", scope: { tool: ["x"] }, enforcement_mode: "observe" },
      });
      let deliveries: WebhookDelivery[] = [];
      for (let i = 0; i < 200 && !deliveries[0]?.last_error; i += 1) {
        await new Promise((r) => setTimeout(r, 25));
        deliveries = (await t.call("GET", `/webhooks/${hook.body.id}/deliveries`, { key: ADMIN_KEY })).body.deliveries;
      }
      expect(deliveries[0].last_error).toMatch(/resolves to a private address/);
      expect(receiver.received).toEqual([]);
      await t.call("POST", `/webhooks/${hook.body.id}/delete`, { key: ADMIN_KEY, body: {} });
    } finally {
      await receiver.close();
    }
  });
}

forEachStore("events at the trust boundary", hostileSuite);
