// The fail-closed decision: an unavailable platform answers `deny`, never an exception and never `allow` by default.
import { AuthorityProblemError, type UnavailableCause } from "./errors.js";
import type { CallOptions, HttpResult } from "./transport.js";
import type { Decision } from "./generated/types.js";
import type { Outcome } from "./provisional.js";
import type { VerificationFailure } from "./verify.js";

export interface AuthorizeOptions extends CallOptions {
  /** Answer `allow` instead of `deny` when the platform is unavailable, for this call only. */
  readonly failOpen?: boolean;
}

/** Why a decision was made by the client rather than the platform. */
export interface Unavailability {
  readonly cause: UnavailableCause;
  readonly attempts: number;
  readonly status?: number;
  readonly message: string;
  /** For `unverified_answer`: why the answer was not taken as the server's. */
  readonly verification?: VerificationFailure;
}

/**
 * A decision the platform made and sealed. `replayed` is true when the server answered the stored
 * answer of an earlier request under the same Idempotency-Key (`idempotent-replayed: true`): an
 * `allow` replayed may already have been acted on by whoever sent that earlier request.
 */
export type PlatformDecision = Decision & { readonly unavailable: null; readonly replayed?: boolean };

/** A decision the client made because the platform could not: no ledger record exists for it. */
export interface UnavailableDecision {
  readonly outcome: "deny" | "allow";
  readonly ledger_id: null;
  readonly gates: readonly [];
  readonly reason: string;
  /**
   * Never set: only the platform gates. Declared so that `residual` reads on any `AuthorizeResult`
   * without first telling the two kinds of decision apart.
   */
  readonly residual?: undefined;
  /** The server's problem code when a 4xx refused the request itself (`forbidden` for a revoked key); otherwise absent. */
  readonly reason_code?: string;
  readonly unavailable: Unavailability;
}

export type AuthorizeResult = PlatformDecision | UnavailableDecision;

const outcomes: readonly Outcome[] = ["allow", "deny", "exhausted", "gated"];

/** Checks a readable decision; undefined when it may be taken as the server's word (verify.ts). */
export type DecisionCheck = (decision: Record<string, unknown>) => Promise<VerificationFailure | undefined>;

// INVARIANT (fail-closed): `allow` comes back only from a readable platform decision that carries
// its `ledger_id` and, when the client verifies, passed `check`; or from an unavailable platform
// when the caller asked for `failOpen` by name. An answer that fails `check` is never unavailability.
export async function authorizeFailClosed(
  send: (call: CallOptions) => Promise<HttpResult>,
  failOpen: boolean,
  call: CallOptions,
  check?: DecisionCheck,
): Promise<AuthorizeResult> {
  // One key for the logical call: every retry inside `send` carries it, so a retried allow is not held twice.
  const idempotencyKey = call.idempotencyKey ?? globalThis.crypto.randomUUID();
  const result = await send({ ...call, idempotencyKey });
  if (result.kind === "problem") throw new AuthorityProblemError(result.problem, "POST", "/authorize");
  if (result.kind === "unavailable") {
    return unavailable(failOpen, {
      cause: result.cause,
      attempts: result.attempts,
      message: result.message,
      ...(result.status === undefined ? {} : { status: result.status }),
    });
  }
  const decision = readDecision(result.body);
  if (decision !== undefined) {
    const failure = check === undefined ? undefined : await check(decision as unknown as Record<string, unknown>);
    if (failure === undefined) return { ...decision, unavailable: null, ...(result.replayed === true ? { replayed: true } : {}) };
    return unavailable(false, {
      cause: "unverified_answer",
      attempts: 1,
      status: result.status,
      message: `${failure.reason}: ${failure.message}`,
      verification: failure,
    });
  }
  return unavailable(failOpen, {
    cause: "unreadable_response",
    attempts: 1,
    status: result.status,
    message: "POST /authorize answered without a readable, recorded decision",
  });
}

/** Accepts a body as a decision only when its outcome is known and it names its sealed record. */
function readDecision(body: unknown): Decision | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const record = body as Record<string, unknown>;
  const outcome = record["outcome"];
  if (typeof outcome !== "string" || !(outcomes as readonly string[]).includes(outcome)) return undefined;
  if (typeof record["ledger_id"] !== "string" || record["ledger_id"] === "") return undefined;
  return {
    ...(record as object),
    outcome: outcome as Outcome,
    ledger_id: record["ledger_id"],
    gates: Array.isArray(record["gates"]) ? (record["gates"] as Decision["gates"]) : [],
    reason: typeof record["reason"] === "string" ? record["reason"] : "",
  } as Decision;
}

function unavailable(failOpen: boolean, why: Unavailability): UnavailableDecision {
  return failOpen
    ? {
        outcome: "allow",
        ledger_id: null,
        gates: [],
        reason: `platform unavailable (${why.cause}): allowed because failOpen was set; ${why.message}`,
        unavailable: why,
      }
    : {
        outcome: "deny",
        ledger_id: null,
        gates: [],
        reason: `platform unavailable (${why.cause}): refused by the client; ${why.message}`,
        unavailable: why,
      };
}
