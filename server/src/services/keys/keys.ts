// API keys: created with a random secret shown once, listed without secrets, revoked by field.

import { API_LIMITS, keyIdentityFault, type ApiKey, type ApiKeyCreated, type KeyCreateBody, type Role } from "@agent-authority/api";
import { Refusal } from "../common/index.js";
import { newId } from "../../ids.js";
import { generateSecret, hashSecret, isStrongEnough } from "../../secrets.js";
import type { KeyRecord, Page, Revocation, Store } from "../../store/core/index.js";
import type { Caller, ServiceContext } from "../common/index.js";
import { keyView } from "../common/index.js";

export interface NewKey {
  readonly identity: string;
  readonly kind: "human" | "service";
  readonly roles: KeyRecord["roles"];
  readonly agentId?: string | undefined;
  /** The agents an `enforcer` key may ask for: required with that role, refused without it. */
  readonly agentIds?: readonly string[] | undefined;
  readonly email?: string | undefined;
  /** Use this secret instead of a generated one (the operator's first admin key). */
  readonly secret?: string | undefined;
}

/** Creates a key in the store; answers the record and the secret, which is never stored. */
export async function createKey(
  store: Store,
  spec: NewKey,
  createdBy: string | null,
  now: number,
): Promise<{ record: KeyRecord; secret: string }> {
  // The same identity rule as the KeyCreateBody schema, for keys created without a request body.
  const identityFault = keyIdentityFault(spec.identity, spec.email);
  if (identityFault !== undefined) throw new Refusal("invalid_key_request", identityFault);
  const hasAgentRole = spec.roles.includes("agent");
  if (hasAgentRole !== (spec.agentId !== undefined)) {
    throw new Refusal(
      "invalid_key_request",
      hasAgentRole ? "the `agent` role needs `agent_id`" : "`agent_id` is only for the `agent` role",
    );
  }
  if (hasAgentRole && (spec.roles.length > 1 || spec.kind !== "service")) {
    throw new Refusal("invalid_key_request", "an `agent` key is a service key with the `agent` role alone");
  }
  const enforcerFault = enforcerKeyFault(spec);
  if (enforcerFault !== undefined) throw new Refusal("invalid_key_request", enforcerFault);
  if (spec.secret !== undefined && !isStrongEnough(spec.secret)) {
    throw new Refusal("invalid_key_request", "a supplied key needs at least 32 printable characters");
  }
  for (const agentId of [...(spec.agentId === undefined ? [] : [spec.agentId]), ...(spec.agentIds ?? [])]) {
    if ((await store.getAgent(agentId)) === undefined) throw new Refusal("agent_not_found", `no agent \`${agentId}\``);
  }
  const secret = spec.secret ?? generateSecret();
  const record: KeyRecord = {
    id: newId("key", now),
    hash: hashSecret(secret),
    identity: spec.identity,
    kind: spec.kind,
    roles: [...spec.roles],
    agent_id: spec.agentId ?? null,
    agent_ids: spec.agentIds === undefined ? null : [...spec.agentIds],
    email: spec.email ?? (spec.kind === "human" && spec.identity.includes("@") ? spec.identity : null),
    created_at: now,
    created_by: createdBy,
    revoked_at: null,
    revoked_by: null,
    revocation_reason: null,
  };
  await store.insertKey(record);
  return { record, secret };
}

/**
 * Why an `enforcer` key cannot be made as asked: the role alone, on a service key, with its list of
 * agents (never an implicit all, and at most API_LIMITS.enforcerAgentsMax); `agent_ids` only with it.
 */
function enforcerKeyFault(spec: NewKey): string | undefined {
  const enforcer = spec.roles.includes("enforcer");
  if (!enforcer) return spec.agentIds === undefined ? undefined : "`agent_ids` is only for the `enforcer` role";
  if (spec.roles.length > 1 || spec.kind !== "service") return "an `enforcer` key is a service key with the `enforcer` role alone";
  const count = spec.agentIds?.length ?? 0;
  if (count === 0) return "the `enforcer` role needs `agent_ids`, the agents it may ask for";
  if (count > API_LIMITS.enforcerAgentsMax) return `\`agent_ids\` holds at most ${API_LIMITS.enforcerAgentsMax} agents`;
  if (new Set(spec.agentIds).size !== count) return "`agent_ids` names an agent twice";
  return undefined;
}

export async function createKeyFromRequest(ctx: ServiceContext, caller: Caller, body: KeyCreateBody): Promise<ApiKeyCreated> {
  const { record, secret } = await createKey(
    ctx.store,
    {
      identity: body.identity,
      kind: body.kind,
      roles: body.roles,
      agentId: body.agent_id,
      agentIds: body.agent_ids,
      email: body.email,
    },
    caller.identity,
    ctx.now(),
  );
  return { ...keyView(record), key: secret };
}

/**
 * What a replay of a key's creation answers: the secret is shown once and never stored, so the
 * stored answer of its Idempotency-Key is this problem, naming the key (decision 0607).
 */
export function secretShownOnce(keyId: string): Refusal {
  return new Refusal(
    "key_secret_shown_once",
    `key \`${keyId}\` was created by the first request with this \`Idempotency-Key\`; its secret was shown in that answer only: if it was lost, revoke the key and create another`,
    { key_id: keyId },
  );
}

export async function listKeys(ctx: ServiceContext, page: Page): Promise<{ keys: ApiKey[]; next_after: string | null }> {
  const records = await ctx.store.listKeys(page);
  return { keys: records.map(keyView), next_after: records.length === page.limit ? records[records.length - 1]!.id : null };
}

/** Revokes a key by field; refuses an unknown or revoked key and the last active admin key. */
export async function revokeKeyRecord(store: Store, id: string, revocation: Revocation): Promise<KeyRecord> {
  return store.transaction(async (tx) => {
    const key = await tx.getKey(id);
    if (key === undefined) throw new Refusal("key_not_found", `no key \`${id}\``);
    if (key.revoked_at !== null) throw new Refusal("key_already_revoked");
    if (key.roles.includes("admin") && (await tx.countActiveKeysWithRole("admin")) <= 1) {
      throw new Refusal("last_admin_key", "create another admin key first");
    }
    await tx.revokeKey(id, revocation);
    return (await tx.getKey(id))!;
  });
}

export async function revokeKey(ctx: ServiceContext, caller: Caller, id: string, reason: string | undefined): Promise<ApiKey> {
  return keyView(await revokeKeyRecord(ctx.store, id, { at: ctx.now(), by: caller.identity, reason: reason ?? null }));
}

/**
 * On an empty database, creates the first admin key (human identity `admin`): the operator's
 * AUTHORITY_ADMIN_KEY, or a generated secret that the caller prints once. Answers the generated
 * secret, or null when none was generated.
 */
export async function bootstrapAdminKey(
  store: Store,
  adminKey: string | undefined,
  now: number,
): Promise<{ created: boolean; generatedSecret: string | null }> {
  return store.transaction(async (tx) => {
    await tx.lockKeyBootstrap();
    if ((await tx.countKeys()) > 0) return { created: false, generatedSecret: null };
    const { secret } = await createKey(tx, { identity: "admin", kind: "human", roles: ["admin"], secret: adminKey }, null, now);
    return { created: true, generatedSecret: adminKey === undefined ? secret : null };
  });
}

/** The caller a key speaks for; undefined for an unknown or revoked key. */
export function callerOfKey(key: KeyRecord | undefined): Caller | undefined {
  if (key === undefined || key.revoked_at !== null) return undefined;
  return {
    keyId: key.id,
    identity: key.identity,
    kind: key.kind,
    email: key.email,
    roles: key.roles,
    agentId: key.agent_id,
    agentIds: key.agent_ids,
  };
}

/** The caller a presented secret speaks for; undefined for an unknown or revoked key. */
export async function callerForSecret(store: Store, secret: string): Promise<Caller | undefined> {
  return callerOfKey(await store.findKeyByHash(hashSecret(secret)));
}

/** The `www-authenticate` header of every 401. */
export const BEARER_CHALLENGE = 'Bearer realm="agent-authority"';

/** The 401 of a request without a usable key: none presented, or one unknown or revoked. */
export function unauthenticated(presented: boolean): Refusal {
  return new Refusal(
    "unauthenticated",
    presented ? "the key is unknown or revoked" : "send `authorization: Bearer <key>` or `x-api-key: <key>`",
  );
}

/** The 403 of a caller that holds none of the roles an endpoint needs. */
export function missingRole(method: string, path: string, roles: readonly Role[]): Refusal {
  return new Refusal("forbidden", `\`${method.toUpperCase()} ${path}\` needs one of the roles ${roles.map((r) => `\`${r}\``).join(", ")}`);
}
