// GET /v1/events: committed events as server-sent events, in sequence order, filtered by type and
// by what the caller's roles may read, resumable from `Last-Event-ID` with nothing lost or sent
// twice. Bounded: streams per key and in all, bytes buffered for a slow client, a heartbeat.

import type { ServerResponse } from "node:http";
import { EVENT_TYPES, EVENT_TYPE_NAMES, type EventType, type Role } from "@agent-authority/api";
import type { Caller, ServiceContext } from "../services/common/index.js";
import { confinedToAgent } from "../services/common/index.js";
import { EVENT_LIMITS, type EventFeed } from "../services/events/index.js";
import { eventView } from "../services/events/index.js";
import type { StoredEvent } from "../store/events/index.js";
import { Refusal } from "../services/common/index.js";

/** Every reader of every type is a role of the endpoint table: a compile-time check. */
const READER_ROLES: readonly (readonly Role[])[] = EVENT_TYPE_NAMES.map((type) => EVENT_TYPES[type].readers);
void READER_ROLES;

/** The types the caller's roles may read. */
export function readableTypes(caller: Caller): EventType[] {
  return EVENT_TYPE_NAMES.filter((type) => EVENT_TYPES[type].readers.some((role) => caller.roles.includes(role)));
}

/** The types asked for with `?types=`, each known and readable; absent: every readable type. */
export function requestedTypes(caller: Caller, raw: string | undefined): EventType[] {
  const readable = readableTypes(caller);
  if (raw === undefined) return readable;
  const asked = raw
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  if (asked.length === 0 || asked.length > EVENT_TYPE_NAMES.length)
    throw new Refusal("invalid_query", `\`types\` must name 1 to ${EVENT_TYPE_NAMES.length} event types, separated by commas`);
  for (const name of asked) {
    if (!(EVENT_TYPE_NAMES as readonly string[]).includes(name))
      throw new Refusal("invalid_query", `\`${name.slice(0, 80)}\` is not an event type`);
    if (!readable.includes(name as EventType)) throw new Refusal("forbidden", `the key's roles may not read \`${name}\` events`);
  }
  return [...new Set(asked)] as EventType[];
}

/** A sequence from `Last-Event-ID` or `?after=`: decimal digits, a safe integer. */
export function resumeSequence(header: string | undefined, query: string | undefined): number | undefined {
  if (header !== undefined) {
    if (!/^\d{1,16}$/.test(header) || !Number.isSafeInteger(Number(header)))
      throw new Refusal("invalid_last_event_id", "`Last-Event-ID` must be the `id:` of an event this stream sent");
    return Number(header);
  }
  if (query === undefined) return undefined;
  if (!/^\d{1,16}$/.test(query) || !Number.isSafeInteger(Number(query)))
    throw new Refusal("invalid_query", "`after` must be an event sequence");
  return Number(query);
}

/** The text of one event as server-sent events. JSON text holds no line break, so `data:` is one line. */
export function sseText(event: StoredEvent): string {
  return `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(eventView(event))}\n\n`;
}

/** Open streams by key, for the per-key and total bounds. */
export class StreamRegistry {
  readonly #byKey = new Map<string, number>();
  #total = 0;

  /** Counts one stream for the key, or refuses it (429) at either bound. */
  open(keyId: string): () => void {
    const held = this.#byKey.get(keyId) ?? 0;
    if (held >= EVENT_LIMITS.streamsPerKeyMax || this.#total >= EVENT_LIMITS.streamsMax) {
      throw new Refusal(
        "too_many_streams",
        held >= EVENT_LIMITS.streamsPerKeyMax
          ? `a key may hold ${EVENT_LIMITS.streamsPerKeyMax} event streams at once; close one first`
          : `the server holds its most event streams (${EVENT_LIMITS.streamsMax})`,
      );
    }
    this.#byKey.set(keyId, held + 1);
    this.#total += 1;
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      this.#total -= 1;
      const left = (this.#byKey.get(keyId) ?? 1) - 1;
      if (left === 0) this.#byKey.delete(keyId);
      else this.#byKey.set(keyId, left);
    };
  }
}

export interface StreamSettings {
  readonly feed: EventFeed;
  readonly registry: StreamRegistry;
  readonly heartbeatMs: number;
}

/**
 * Waits until the client has taken what was written (`drain`), at most `stallMs`; answers whether
 * it did. A client that takes nothing for that long is gone, or too slow to be served.
 */
function drained(res: ServerResponse, stallMs: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      res.off("drain", onDrain);
      signal.removeEventListener("abort", onAbort);
      resolve(ok);
    };
    const onDrain = () => done(true);
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(false), stallMs);
    res.on("drain", onDrain);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Writes one piece of the stream; answers false when the stream was closed for a slow client. */
async function send(res: ServerResponse, text: string, stallMs: number, signal: AbortSignal): Promise<boolean> {
  const flowing = res.write(text);
  // INVARIANT (stream-bounded): at most streamBufferBytesMax bytes (and one event) wait unsent;
  // the writer waits for the client at every full buffer, and drops a client that stalls.
  if (res.writableLength > EVENT_LIMITS.streamBufferBytesMax || (!flowing && !(await drained(res, stallMs, signal)))) {
    res.destroy();
    return false;
  }
  return true;
}

/** One open stream: sends events after `from` until the client leaves, the feed stops or the client stalls. */
async function pump(
  ctx: ServiceContext,
  settings: StreamSettings,
  res: ServerResponse,
  caller: Caller,
  types: readonly EventType[],
  from: number,
  signal: AbortSignal,
): Promise<void> {
  let cursor = from;
  const confined = confinedToAgent(caller);
  const stallMs = settings.heartbeatMs * EVENT_LIMITS.stallHeartbeats;
  let lastWrite = Date.now();
  while (!signal.aborted && !res.destroyed && !settings.feed.stopped) {
    const page = await ctx.store.eventPath().eventsAfter(cursor, EVENT_LIMITS.streamPageEvents, types);
    for (const event of page) {
      cursor = event.seq;
      if (confined !== null && event.agent_id !== confined) continue;
      if (!(await send(res, sseText(event), stallMs, signal))) return;
      lastWrite = Date.now();
    }
    if (page.length === EVENT_LIMITS.streamPageEvents) continue;
    const idle = settings.heartbeatMs - (Date.now() - lastWrite);
    if (idle <= 0) {
      if (!(await send(res, ": heartbeat\n\n", stallMs, signal))) return;
      lastWrite = Date.now();
      continue;
    }
    await settings.feed.wait(idle, signal);
  }
}

/** The handler of `GET /v1/events`, after authentication and the role check. */
export async function streamEvents(
  ctx: ServiceContext,
  settings: StreamSettings,
  caller: Caller,
  req: { headers: Record<string, string | string[] | undefined>; query: string | undefined; after: string | undefined },
  res: ServerResponse,
): Promise<void> {
  const types = requestedTypes(caller, req.query);
  const header = req.headers["last-event-id"];
  const resume = resumeSequence(typeof header === "string" ? header : undefined, req.after);
  let release: () => void;
  try {
    release = settings.registry.open(caller.keyId);
  } catch (error) {
    res.setHeader("retry-after", String(EVENT_LIMITS.streamRetryAfterSeconds));
    throw error;
  }
  const aborter = new AbortController();
  // Registered before the first wait: a client gone meanwhile ends the stream at once.
  res.on("close", () => aborter.abort());
  try {
    const cursor = resume ?? (await ctx.store.eventPath().lastSeq());
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", "x-accel-buffering": "no" });
    res.write(`retry: 1000\n: stream from sequence ${cursor}\n\n`);
    await pump(ctx, settings, res, caller, types, cursor, aborter.signal);
  } finally {
    release();
    if (!res.destroyed) {
      // A server that stops closes the connection too, rather than keeping it alive idle.
      if (settings.feed.stopped) res.once("finish", () => res.socket?.destroy());
      res.end();
    }
  }
}
