// What every service function is given: the store, the configuration it needs, the clock and the
// authenticated caller.

import type { AuthorizeBody, Role } from "@agent-authority/api";
import type { PreparedAnswer, RequestClaim } from "./answers.js";
import type { Refusal } from "./refusal.js";
import type { Store } from "../../store/core/index.js";
import type { GateName, Outcome } from "@agent-authority/engine";
import type { Signer } from "../seal/index.js";

export interface Caller {
  readonly keyId: string;
  readonly identity: string;
  readonly kind: "human" | "service";
  readonly email: string | null;
  readonly roles: readonly Role[];
  /** Set for keys with the `agent` role: the one agent the key speaks for. */
  readonly agentId: string | null;
  /** Set for keys with the `enforcer` role: the agents it may ask for through AuthZEN (decision 1701). */
  readonly agentIds?: readonly string[] | null;
}

export interface ServiceContext {
  readonly store: Store;
  readonly environment: string;
  readonly autoApprovalCeilingMinor: number;
  readonly now: () => number;
  /** Signs decisions and settlements, and lists the public keys (signing.ts). */
  readonly signer: Signer;
  /** The HMAC key of page cursors, derived from the server key so that every replica shares it (cursor.ts). */
  readonly cursorKey: Buffer;
  /** The longest a hold may live (docs/decisions.md); absent: the engine's default of 24 hours. */
  readonly holdLifetimeMs?: number;
  /** Runs authorize transactions on a thread of their own (SQLite); absent: on this thread. */
  readonly authorizeWorker?: AuthorizeRunner;
  /** Test-only fault injection; absent in every real deployment. */
  readonly faults?: FaultHooks;
  /** Told what the metrics count of the services' work (http/metrics.ts); absent: nothing is counted. */
  readonly observer?: ServiceObserver;
  /** Whether webhook URLs may name loopback, private and link-local addresses (decision 0705). */
  readonly webhookAllowPrivate?: boolean;
  /** Wakes the webhook dispatcher after a change it should act on at once. */
  readonly webhookNudge?: () => void;
  /** The origin line of the ledger's checkpoints (decision 0621); absent: derived from the first signing key. */
  readonly ledgerOrigin?: string;
}

/** What the metrics count of a decision's answer (authorize.ts's PreparedAnswer has these fields). */
export interface DecidedAnswer {
  readonly outcome?: Outcome;
  readonly gate?: GateName | null;
  readonly trips?: readonly { readonly action: string; readonly mode: string }[];
}

/** What the services tell the metrics, once the work has committed; authorize's decisions come with their answers instead. */
export interface ServiceObserver {
  /** A new decision was answered (never a replay): its outcome, deciding gate and the breakers it tripped. */
  decided(answer: DecidedAnswer): void;
  /** A gated decision was approved, `latencyMs` after it was made. */
  decisionApproved(latencyMs: number): void;
  /** A record other than a decision was sealed into the ledger. */
  sealed(kind: "settlement"): void;
}

/**
 * Test-only: the Idempotency-Keys at which the process kills itself (SIGKILL), after a request with
 * the key has written its effects and answer but before they commit, or after they committed but
 * before the answer is sent (decision 0605). The crash tests set them through `main.ts`.
 */
export interface FaultHooks {
  readonly crashBeforeCommitKey?: string | undefined;
  readonly crashAfterCommitKey?: string | undefined;
}

/** Something that runs `authorizeAction` elsewhere with the same settings (authorize-thread.ts). */
export interface AuthorizeRunner {
  /** Set once the runner has stopped unasked: authorize cannot be answered, and the server is not ready. */
  readonly failure: Error | undefined;
  /** Authorizes for the key whose hash is `keyHash`, which the runner looks up itself (a 401 or 403 refusal when it may not). */
  authorize(keyHash: string, body: AuthorizeBody, claim: RequestClaim | undefined): Promise<PreparedAnswer | Refusal>;
  /** Has the runner read the signing keys again (after a rotation). */
  refreshSigningKeys(): void;
}

/**
 * A caller whose only way in is the `agent` role is confined to its own agent's resources; any
 * other role sees everything its endpoint allows.
 */
export function confinedToAgent(caller: Caller): string | null {
  return caller.roles.some((role) => role !== "agent") ? null : caller.agentId;
}
