// GET /v1/events over a real server: order, resumption with Last-Event-ID while writers commit
// concurrently (nothing lost, nothing twice), type filters, what each role may read, and the
// bounds: streams per key (429 at the edge), the heartbeat, malformed resumption ids.

import { request } from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { EVENT_TYPES } from "@agent-authority/api";
import { EVENT_LIMITS } from "@agent-authority/server";
import { ADMIN_KEY, CERTIFICATION, certifiedAgentId, expectProblem, startTestServer, type TestServer } from "./http-harness.js";
import { openStream, type SseStream } from "./sse-client.js";
import { forEachStore, type StoreTarget } from "./targets.js";

function streamSuite(target: StoreTarget): void {
  let t: TestServer;
  let agentId: string;
  beforeAll(async () => {
    t = await startTestServer(target, { eventPollMs: 20, eventHeartbeatMs: 300 });
    agentId = await certifiedAgentId(t, "stream-agent");
  });
  afterAll(async () => {
    await t?.close();
  });

  async function issue(agent = agentId): Promise<string> {
    const reply = await t.call("POST", "/grants", {
      key: ADMIN_KEY,
      body: { agent_id: agent, principal_type: "human", principal_id: "p@example.com", scope: { tool: ["payments.*"] } },
    });
    expect(reply.status).toBe(201);
    return reply.body.id;
  }

  const lastSeq = () => t.db.store.eventPath().lastSeq();

  it("sends committed events in sequence order from `after`, each `id:` its sequence", async () => {
    const start = await lastSeq();
    const stream = await openStream(t.baseUrl, ADMIN_KEY, `?after=${start}`);
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
      const ids = [await issue(), await issue(), await issue()];
      await stream.waitFor(3);
      expect(stream.events.map((e) => e.data.subject)).toEqual(ids);
      expect(stream.events.map((e) => Number(e.id))).toEqual([start + 1, start + 2, start + 3]);
      expect(stream.events.map((e) => e.event)).toEqual(["grant.issued", "grant.issued", "grant.issued"]);
      expect(stream.events[0]!.data).toMatchObject({
        type: "grant.issued",
        sequence: start + 1,
        data: { grant_id: ids[0], agent_id: agentId },
      });
    } finally {
      stream.close();
    }
  });

  it("starts at the newest event without `Last-Event-ID` or `after`", async () => {
    await issue();
    const stream = await openStream(t.baseUrl, ADMIN_KEY);
    try {
      const fresh = await issue();
      await stream.waitFor(1);
      expect(stream.events.map((e) => e.data.subject)).toEqual([fresh]);
    } finally {
      stream.close();
    }
  });

  it("loses nothing and repeats nothing across resumptions while writers commit concurrently", async () => {
    const start = await lastSeq();
    const written: string[] = [];
    const writers = Array.from({ length: 4 }, async () => {
      for (let i = 0; i < 12; i += 1) written.push(await issue());
    });
    const writing = Promise.all(writers);
    const received: { id: number; subject: string }[] = [];
    let last = start;
    // Reconnect every few events, each time from the last id received, as EventSource does.
    while (received.length < 48) {
      const stream = await openStream(t.baseUrl, ADMIN_KEY, "", { "last-event-id": String(last) });
      try {
        await stream.waitFor(Math.min(5, 48 - received.length), 20_000);
      } finally {
        stream.close();
      }
      for (const e of stream.events) received.push({ id: Number(e.id), subject: e.data.subject });
      last = received[received.length - 1]!.id;
    }
    await writing;
    expect(received.map((r) => r.id)).toEqual(Array.from({ length: received.length }, (_, i) => start + i + 1));
    expect(new Set(received.map((r) => r.subject)).size).toBe(received.length);
    expect([...received.map((r) => r.subject)].sort()).toEqual([...written].sort());
  });

  it("filters by type, and refuses unknown and unreadable types", async () => {
    const start = await lastSeq();
    const stream = await openStream(t.baseUrl, ADMIN_KEY, `?after=${start}&types=certificate.issued,grant.revoked`);
    try {
      const grant = await issue();
      await t.call("POST", `/grants/${grant}/revoke`, { key: ADMIN_KEY, body: {} });
      await stream.waitFor(1);
      expect(stream.events.map((e) => e.event)).toEqual(["grant.revoked"]);
    } finally {
      stream.close();
    }
    const unknown = await t.call("GET", "/events?types=grant.exploded", { key: ADMIN_KEY });
    expectProblem(unknown, 400, "invalid_query");
    const certifier = await t.key("cert@example.com", ["certifier"]);
    const unreadable = await t.call("GET", "/events?types=webhook.delivery_dead_lettered", { key: certifier });
    expectProblem(unreadable, 403, "forbidden");
    expectProblem(await t.call("GET", "/events", {}), 401, "unauthenticated");
  });

  it("gives each role only what it may read, and an agent key only its own agent's events", async () => {
    const other = await certifiedAgentId(t, "stream-other");
    const agentKey = await t.key("stream-agent-key", ["agent"], { kind: "service", agent_id: agentId });
    const certifier = await t.key("cert2@example.com", ["certifier"]);
    const start = await lastSeq();
    const asAgent = await openStream(t.baseUrl, agentKey, `?after=${start}`);
    const asCertifier = await openStream(t.baseUrl, certifier, `?after=${start}`);
    try {
      const foreign = await issue(other);
      const own = await issue(agentId);
      const certified = await t.call("POST", `/agents/${other}/certification`, { key: ADMIN_KEY, body: CERTIFICATION });
      expect(certified.status).toBe(201);
      await asAgent.waitFor(1);
      await asCertifier.waitFor(4);
      expect(asAgent.events.map((e) => e.data.subject)).toEqual([own]);
      expect(foreign).not.toBe(own);
      // The certifier reads grants and certificates (every type's readers list says who may).
      expect(asCertifier.events.map((e) => e.event)).toEqual(["grant.issued", "grant.issued", "certificate.revoked", "certificate.issued"]);
      expect(EVENT_TYPES["decision.gated"].readers).not.toContain("certifier");
    } finally {
      asAgent.close();
      asCertifier.close();
    }
  });

  it(`holds ${EVENT_LIMITS.streamsPerKeyMax} streams per key and refuses one more with 429 until one closes`, async () => {
    const key = await t.key("many@example.com", ["auditor"]);
    const open: SseStream[] = [];
    try {
      for (let i = 0; i < EVENT_LIMITS.streamsPerKeyMax; i += 1) {
        const stream = await openStream(t.baseUrl, key);
        expect(stream.status).toBe(200);
        open.push(stream);
      }
      const refused = await openStream(t.baseUrl, key);
      expect(refused.status).toBe(429);
      expect(refused.problem).toMatchObject({ code: "too_many_streams", status: 429 });
      expect(refused.headers["retry-after"]).toBe(String(EVENT_LIMITS.streamRetryAfterSeconds));
      // Another key is not held back by this one's streams.
      const other = await openStream(t.baseUrl, ADMIN_KEY);
      expect(other.status).toBe(200);
      other.close();
      open.pop()!.close();
      let reopened: SseStream | undefined;
      for (let i = 0; i < 50 && reopened?.status !== 200; i += 1) {
        await new Promise((r) => setTimeout(r, 20));
        reopened = await openStream(t.baseUrl, key);
      }
      expect(reopened!.status).toBe(200);
      open.push(reopened!);
    } finally {
      for (const stream of open) stream.close();
    }
  });

  it(`holds ${EVENT_LIMITS.streamsMax} streams in the process and refuses one more with 429`, async () => {
    const keys: string[] = [];
    for (let i = 0; i < EVENT_LIMITS.streamsMax / EVENT_LIMITS.streamsPerKeyMax + 1; i += 1)
      keys.push(await t.key(`reader-${i}@example.com`, ["auditor"]));
    const open: SseStream[] = [];
    try {
      for (const key of keys.slice(0, -1)) {
        for (let i = 0; i < EVENT_LIMITS.streamsPerKeyMax; i += 1) {
          const stream = await openStream(t.baseUrl, key);
          expect(stream.status).toBe(200);
          open.push(stream);
        }
      }
      expect(open).toHaveLength(EVENT_LIMITS.streamsMax);
      // A key holding no stream at all is refused: the process is full.
      const refused = await openStream(t.baseUrl, keys.at(-1)!);
      expect(refused.status).toBe(429);
      expect(refused.problem?.code).toBe("too_many_streams");
    } finally {
      for (const stream of open) stream.close();
    }
    // The server counts a stream free once it has seen its connection close.
    let after: SseStream | undefined;
    for (let i = 0; i < 100 && after?.status !== 200; i += 1) {
      await new Promise((r) => setTimeout(r, 50));
      after = await openStream(t.baseUrl, keys.at(-1)!);
    }
    expect(after!.status).toBe(200);
    after!.close();
  });

  it(`closes a stream whose client takes nothing for ${EVENT_LIMITS.stallHeartbeats} heartbeats; the client resumes without loss`, async () => {
    const start = await lastSeq();
    const count = 160;
    // Events of about 64 KiB each, 10 MiB in all: more than the bound and any socket buffers.
    await t.db.store.transaction(async (tx) => {
      for (let i = 0; i < count; i += 1) {
        await tx.eventPath().appendEvent({
          id: `evn_${String(i).padStart(10, "0")}${"abcdefghjkmnpqrs"}`,
          type: "grant.issued",
          at: Date.now(),
          subject: `grt_${String(i).padStart(26, "0")}`,
          agent_id: null,
          data: { pad: "x".repeat(65_536) },
        });
      }
    });
    const received = new Map<number, string>();
    // A client that reads nothing for a while: the server must not hold its backlog without bound.
    const stalled = await new Promise<{ ended: Promise<void>; resume: () => void; ids: () => number[] }>((resolve, reject) => {
      const req = request(new URL(`${t.baseUrl}/events?after=${start}`), { headers: { authorization: `Bearer ${ADMIN_KEY}` } }, (res) => {
        res.pause();
        let buffer = "";
        const ids: number[] = [];
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          buffer += chunk;
          // Only complete events count, as an EventSource dispatches them.
          const complete = buffer.lastIndexOf("\n\n");
          if (complete === -1) return;
          for (const match of buffer.slice(0, complete).matchAll(/^id: (\d+)$/gm)) ids.push(Number(match[1]));
          buffer = buffer.slice(complete + 2);
        });
        const ended = new Promise<void>((done) => {
          res.on("close", () => done());
          res.on("error", () => done());
        });
        resolve({ ended, resume: () => res.resume(), ids: () => [...new Set(ids)] });
      });
      req.on("error", reject);
      req.end();
    });
    await new Promise((r) => setTimeout(r, 1_500));
    // Two heartbeats (300 ms each here) without taking anything: the server has closed the stream.
    stalled.resume();
    await stalled.ended;
    const first = stalled.ids();
    expect(first.length).toBeLessThan(count);
    for (const id of first) received.set(id, "first");
    // Resumed from the last complete event received: the rest arrive, none twice.
    const last = first.length === 0 ? start : Math.max(...first.filter((id) => id <= start + count));
    const rest = await openStream(t.baseUrl, ADMIN_KEY, "", { "last-event-id": String(last) });
    try {
      await rest.waitFor(start + count - last, 20_000);
      for (const e of rest.events) {
        const id = Number(e.id);
        if (id > start + count) continue;
        expect(id).toBeGreaterThan(last);
        received.set(id, "rest");
      }
    } finally {
      rest.close();
    }
    expect([...received.keys()].filter((id) => id > start).sort((a, b) => a - b)).toEqual(
      Array.from({ length: count }, (_, i) => start + i + 1),
    );
  });

  it("sends a heartbeat comment on an idle stream", async () => {
    const stream = await openStream(t.baseUrl, ADMIN_KEY);
    try {
      await stream.waitForComment("heartbeat");
      expect(stream.events).toEqual([]);
    } finally {
      stream.close();
    }
  });

  it("refuses a Last-Event-ID that is no sequence, and an `after` that is none", async () => {
    for (const bad of ["abc", "-1", "1.5", "99999999999999999", "7 8", "0x10"]) {
      const refused = await openStream(t.baseUrl, ADMIN_KEY, "", { "last-event-id": bad });
      expect(refused.status, bad).toBe(400);
      expect(refused.problem?.code).toBe("invalid_last_event_id");
    }
    expectProblem(await t.call("GET", "/events?after=x", { key: ADMIN_KEY }), 400, "invalid_query");
  });

  it("ends open streams when the server stops", async () => {
    const own = await startTestServer(target, { eventPollMs: 20 });
    const stream = await openStream(own.baseUrl, ADMIN_KEY);
    await own.close();
    await stream.ended;
    expect(stream.status).toBe(200);
  });
}

forEachStore("event stream", streamSuite);
