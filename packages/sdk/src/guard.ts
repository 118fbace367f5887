// Runs a tool only when authorized, then settles what the tool reports it actually spent.
import { AuthorityError } from "./errors.js";
import type { AuthorizeOptions, AuthorizeResult } from "./authorize.js";
import type { AuthorizeBody, Settlement, SettleBody } from "./generated/types.js";
import type { CallOptions } from "./transport.js";

/** The server takes idempotency keys of 1 to 255 visible ASCII characters. */
const idempotencyKeyCharsMax = 255;
const settleSuffix = ":settle";

/** The request beyond grant and tool: amount, arguments, context, attestation, approval. */
export type GuardRequest = Omit<AuthorizeBody, "grant_id" | "tool"> & AuthorizeOptions;

/** What the tool returns: its value and, when an amount was held, what it actually spent. */
export interface ToolRun<T> {
  readonly value: T;
  /** Minor units actually spent, at most the amount requested; absent means the whole amount. */
  readonly spent_minor?: number;
}

/** The tool itself; it receives the `allow` decision it runs under. */
export type GuardedTool<T> = (decision: AuthorizeResult & { readonly outcome: "allow" }) => Promise<ToolRun<T>> | ToolRun<T>;

export type GuardResult<T> =
  | { readonly ran: false; readonly decision: AuthorizeResult }
  | {
      readonly ran: true;
      readonly value: T;
      readonly decision: AuthorizeResult;
      /** The settlement, or null when nothing was held (no amount, or a fail-open decision with no record). */
      readonly settlement: Settlement | null;
      /** Why settling failed; the tool's value is still returned and the hold lapses on its own. */
      readonly settle_error: AuthorityError | null;
    };

/** The two calls guard needs, so that it depends on the client's face and nothing else. */
export interface GuardClient {
  authorize(body: AuthorizeBody, options?: AuthorizeOptions): Promise<AuthorizeResult>;
  readonly decisions: { settle(ledgerId: string, body: SettleBody, call?: CallOptions): Promise<Settlement> };
}

export async function runGuard<T>(
  client: GuardClient,
  grant: string,
  tool: string,
  fn: GuardedTool<T>,
  request: GuardRequest,
): Promise<GuardResult<T>> {
  const { idempotencyKey, timeoutMs, signal, failOpen, ...action } = request;
  const options: AuthorizeOptions = {
    ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(signal === undefined ? {} : { signal }),
    ...(failOpen === undefined ? {} : { failOpen }),
  };
  const decision = await client.authorize({ ...action, grant_id: grant, tool }, options);
  if (decision.outcome !== "allow") return { ran: false, decision };
  // A tool that throws is not settled: what it spent is unknown, so its hold keeps counting until it lapses.
  const run = await fn(decision as AuthorizeResult & { readonly outcome: "allow" });
  const held = action.amount_minor ?? 0;
  if (decision.ledger_id === null || held <= 0) {
    return { ran: true, value: run.value, decision, settlement: null, settle_error: null };
  }
  const spent = run.spent_minor ?? held;
  try {
    // With a caller's own key the settlement's key follows from it, so a repeated guard settles once.
    const settleCall: CallOptions = {
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(idempotencyKey === undefined || idempotencyKey.length > idempotencyKeyCharsMax - settleSuffix.length
        ? {}
        : { idempotencyKey: `${idempotencyKey}${settleSuffix}` }),
    };
    const settlement = await client.decisions.settle(decision.ledger_id, { amount_minor: spent }, settleCall);
    return { ran: true, value: run.value, decision, settlement, settle_error: null };
  } catch (error) {
    if (!(error instanceof AuthorityError)) throw error;
    return { ran: true, value: run.value, decision, settlement: null, settle_error: error };
  }
}
