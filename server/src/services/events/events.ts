// The outbox's one door: every effect that has an event writes it here, inside the effect's own
// transaction, so the event commits with the effect or not at all (docs/events.md).

import type { EventType } from "@agent-authority/api";
import { newId } from "../../ids.js";
import type { StoredEvent } from "../../store/events/index.js";
import type { Store } from "../../store/core/index.js";
import { iso } from "../common/index.js";

export interface EventFacts {
  /** The id of the record the event is about. */
  readonly subject: string;
  /** The agent the event concerns, when one does: an agent key reads only its own agent's events. */
  readonly agentId: string | null;
  readonly at: number;
  readonly data: Readonly<Record<string, unknown>>;
}

/** Writes one event in the open transaction `tx`. */
export async function emitEvent(tx: Store, type: EventType, facts: EventFacts): Promise<void> {
  await tx.eventPath().appendEvent({
    id: newId("evn", facts.at),
    type,
    at: facts.at,
    subject: facts.subject,
    agent_id: facts.agentId,
    data: facts.data,
  });
}

/** An event as the stream and webhooks carry it (the `Event` schema). */
export function eventView(event: StoredEvent): Record<string, unknown> {
  return { id: event.id, type: event.type, sequence: event.seq, time: iso(event.at), subject: event.subject, data: event.data };
}
