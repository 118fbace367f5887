// One framework tool call decided first: its name and arguments become an action, `guard` runs it, refusals become a value for the model.
import { hash } from "node:crypto";
import { AuthorityProblemError } from "./errors.js";
import type { AuthorizeResult } from "./authorize.js";
import { runGuard, type GuardClient, type GuardRequest, type GuardResult } from "./guard.js";
import type { DecisionApproval, Settlement } from "./generated/types.js";
import type { CallOptions } from "./transport.js";

/** Every bound of a governed tool call, one frozen object with units last. */
export const TOOL_CALL_LIMITS = Object.freeze({
  /** The server's bound on an action's tool name. */
  actionCharsMax: 200,
  approvalWaitMsMax: 86_400_000,
  approvalPollMsMin: 100,
  approvalPollMsMax: 60_000,
  /** Gated calls remembered per governor, so that the same call made again after a human approved runs. */
  pendingApprovalsMax: 256,
  /** The text of a refusal shown to the model. */
  refusalCharsMax: 2_000,
});

/** Defaults of a governor, units last. */
export const TOOL_CALL_DEFAULTS = Object.freeze({ approvalWaitMs: 0, approvalPollMs: 1_000 });

/** How one framework tool's call becomes an action; every part is optional. */
export interface ToolActionOptions {
  /** The action's tool name; default `<namespace>.<tool name>`. */
  readonly action?: string;
  /** The amount the call may spend, taken from its arguments; it is held while the tool runs. */
  readonly amount?: (args: Readonly<Record<string, unknown>>) => { readonly amount_minor: unknown; readonly currency: unknown } | undefined;
  /** What the policy sees as `args.*`; default nothing, because what is sent is sealed in the ledger for good. */
  readonly args?: (args: Readonly<Record<string, unknown>>) => Record<string, unknown>;
  /** What the tool actually spent, read from its result; absent or not a non-negative integer: the whole hold. */
  readonly cost?: (result: unknown) => unknown;
}

/** One decided call, as an adopter's `onDecision` sees it. */
export interface ToolDecisionEvent {
  readonly tool: string;
  readonly action: string;
  readonly outcome: AuthorizeResult["outcome"];
  readonly ledger_id: string | null;
  readonly ran: boolean;
  readonly settlement: Settlement | null;
  /** Why settling failed; the tool's result is still returned and the hold lapses on its own. */
  readonly settle_error: Error | null;
}

export interface ToolGovernanceOptions {
  /** The grant every call is decided against. */
  readonly grant: string;
  /** The scope namespace: a tool named `refund` is the action `<namespace>.refund`. */
  readonly namespace: string;
  /** Per tool, by the framework's tool name. */
  readonly tools?: Readonly<Record<string, ToolActionOptions>>;
  /** How long a gated call waits for a human's approval; 0 (the default) answers "waiting for approval" at once. */
  readonly approvalWaitMs?: number;
  /** How often the approval is read while waiting. Default 1000 ms. */
  readonly approvalPollMs?: number;
  /** Called after every decided call, for the adopter's log. */
  readonly onDecision?: (event: ToolDecisionEvent) => void;
}

/** What the model receives instead of the tool's result when the call was not run. */
export interface ToolRefusal {
  readonly refused: true;
  readonly outcome: "deny" | "exhausted" | "gated";
  /** The gate that decided; null when the server could not decide and the client refused. */
  readonly gate: string | null;
  readonly reason_code: string | null;
  readonly reason: string;
  /** The sealed decision; null when no decision was recorded. */
  readonly ledger_id: string | null;
  /** True for a gated call a human can still approve: call the tool again with the same arguments once approved. */
  readonly waiting_for_approval: boolean;
  /** For a gated call, who can approve, as an expression over `approver`. */
  readonly approvable_by?: string;
  /** One sentence for the model. */
  readonly message: string;
}

export type GovernedCall<T> = { readonly ran: true; readonly value: T } | { readonly ran: false; readonly refusal: ToolRefusal };

/** The calls a governor needs: authorize and settle (through guard) and reading an approval. */
export interface GovernorClient extends GuardClient {
  readonly decisions: GuardClient["decisions"] & { approval(ledgerId: string, call?: CallOptions): Promise<DecisionApproval> };
}

/** Decides the calls of one agent's framework tools against one grant. */
export interface ToolGovernor {
  /** The action a framework tool's calls are decided as. */
  actionOf(tool: string): string;
  /** Decides a call of `tool` with `args`, and runs `run` only when allowed. */
  call<T>(tool: string, args: unknown, run: () => Promise<T> | T, signal?: AbortSignal): Promise<GovernedCall<T>>;
}

const actionPattern = /^[A-Za-z0-9_.:-]+$/;
const namespacePattern = /^[A-Za-z0-9_:-]+(\.[A-Za-z0-9_:-]+)*$/;

/** Checks the options once, where the adopter wrote them; a mistake is a thrown TypeError or RangeError. */
function checkedOptions(options: ToolGovernanceOptions): Required<Pick<ToolGovernanceOptions, "approvalWaitMs" | "approvalPollMs">> {
  if (typeof options.grant !== "string" || options.grant.length === 0) throw new TypeError("grant must be a grant id such as `grt_…`");
  if (typeof options.namespace !== "string" || !namespacePattern.test(options.namespace)) {
    throw new TypeError("namespace must be dot-separated names of letters, digits, `_`, `-` and `:`, such as `payments`");
  }
  const approvalWaitMs = options.approvalWaitMs ?? TOOL_CALL_DEFAULTS.approvalWaitMs;
  const approvalPollMs = options.approvalPollMs ?? TOOL_CALL_DEFAULTS.approvalPollMs;
  if (!Number.isSafeInteger(approvalWaitMs) || approvalWaitMs < 0 || approvalWaitMs > TOOL_CALL_LIMITS.approvalWaitMsMax) {
    throw new RangeError(`approvalWaitMs must be an integer from 0 to ${TOOL_CALL_LIMITS.approvalWaitMsMax}`);
  }
  if (
    !Number.isSafeInteger(approvalPollMs) ||
    approvalPollMs < TOOL_CALL_LIMITS.approvalPollMsMin ||
    approvalPollMs > TOOL_CALL_LIMITS.approvalPollMsMax
  ) {
    throw new RangeError(
      `approvalPollMs must be an integer from ${TOOL_CALL_LIMITS.approvalPollMsMin} to ${TOOL_CALL_LIMITS.approvalPollMsMax}`,
    );
  }
  for (const [tool, mapping] of Object.entries(options.tools ?? {})) {
    if (mapping.action !== undefined) checkedAction(mapping.action, `tools.${tool}.action`);
  }
  return { approvalWaitMs, approvalPollMs };
}

function checkedAction(action: string, where: string): string {
  if (typeof action !== "string" || action.length > TOOL_CALL_LIMITS.actionCharsMax || !actionPattern.test(action)) {
    throw new TypeError(
      `${where}: \`${String(action).slice(0, 80)}\` is no action name (1 to ${TOOL_CALL_LIMITS.actionCharsMax} letters, digits, \`_\`, \`.\`, \`:\` or \`-\`)`,
    );
  }
  return action;
}

/**
 * A governor for one grant. INVARIANT (decided-first): `run` is called only inside guard's `allow`,
 * so a refusal, an unavailable platform or a 4xx never runs the tool.
 */
export function toolGovernor(client: GovernorClient, options: ToolGovernanceOptions): ToolGovernor {
  const { approvalWaitMs, approvalPollMs } = checkedOptions(options);
  const mappings = options.tools ?? {};
  // Gated decisions by a digest of the whole call, so only the same call made again after a human approved runs under that approval.
  const pending = new Map<string, { readonly ledgerId: string; readonly residual: string | undefined }>();
  const actionOf = (tool: string): string => {
    const mapped = Object.hasOwn(mappings, tool) ? mappings[tool]?.action : undefined;
    return checkedAction(mapped ?? `${options.namespace}.${tool}`, `the action of tool \`${tool.slice(0, 80)}\``);
  };
  const call = async <T>(tool: string, args: unknown, run: () => Promise<T> | T, signal?: AbortSignal): Promise<GovernedCall<T>> => {
    const action = actionOf(tool);
    const mapping = Object.hasOwn(mappings, tool) ? mappings[tool] : undefined;
    const described = describe(mapping, args);
    if (typeof described === "string") return { ran: false, refusal: undescribedRefusal(tool, described) };
    const asked = await digestOf(action, args);
    const earlier = asked === undefined ? undefined : pending.get(asked);
    const approved = earlier === undefined ? undefined : await readApproval(client, earlier.ledgerId, signal);
    if (earlier !== undefined && approved === undefined) return { ran: false, refusal: waiting(tool, earlier.ledgerId, earlier.residual) };
    let result = await decide(client, options.grant, action, described, mapping, run, signal, approved);
    if (approved !== undefined && asked !== undefined) pending.delete(asked);
    if (approvable(result) && approvalWaitMs > 0) {
      const approval = await waitForApproval(client, result.decision.ledger_id, approvalWaitMs, approvalPollMs, signal);
      if (approval !== undefined) result = await decide(client, options.grant, action, described, mapping, run, signal, approval);
    }
    options.onDecision?.({
      tool,
      action,
      outcome: result.decision.outcome,
      ledger_id: result.decision.ledger_id,
      ran: result.ran,
      settlement: result.ran ? result.settlement : null,
      settle_error: result.ran ? result.settle_error : null,
    });
    if (result.ran) return { ran: true, value: result.value };
    if (approvable(result) && asked !== undefined) {
      pending.set(asked, {
        ledgerId: result.decision.ledger_id,
        residual: result.decision.unavailable === null ? result.decision.residual : undefined,
      });
      if (pending.size > TOOL_CALL_LIMITS.pendingApprovalsMax) pending.delete(pending.keys().next().value!);
    }
    return { ran: false, refusal: refusalOf(tool, result.decision) };
  };
  return { actionOf, call };
}

/**
 * The SHA-256 of the action and every argument the model sent, not only those the policy sees: an
 * approval is reused only for exactly the call a human was shown. Undefined when the arguments are
 * not JSON (then the call is not remembered and is decided anew each time).
 */
async function digestOf(action: string, args: unknown): Promise<string | undefined> {
  let text: string;
  try {
    text = JSON.stringify([action, args ?? null]);
  } catch {
    return undefined;
  }
  return hash("sha256", text, "hex");
}

/** A call the policy gated: a human can approve it, and the same call made again then runs. */
function approvable<T>(
  result: GuardResult<T>,
): result is GuardResult<T> & { readonly ran: false; readonly decision: { readonly ledger_id: string } } {
  return (
    !result.ran && result.decision.outcome === "gated" && result.decision.ledger_id !== null && result.decision.decided_by === "policy"
  );
}

interface Described {
  readonly request: Pick<GuardRequest, "amount_minor" | "currency" | "args">;
  readonly heldMinor: number;
}

/** The action's amount and policy arguments, or why the call cannot be described (then nothing is decided or run). */
function describe(mapping: ToolActionOptions | undefined, args: unknown): Described | string {
  const record = typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
  let amount: ReturnType<NonNullable<ToolActionOptions["amount"]>>;
  let policyArgs: Record<string, unknown> | undefined;
  try {
    amount = mapping?.amount?.(record);
    policyArgs = mapping?.args?.(record);
  } catch (error) {
    return `its arguments could not be read (${error instanceof Error ? error.message : String(error)})`;
  }
  if (mapping?.amount !== undefined && amount === undefined) return "it names no amount";
  if (amount !== undefined) {
    if (typeof amount.amount_minor !== "number" || !Number.isSafeInteger(amount.amount_minor) || amount.amount_minor < 0) {
      return "its amount is not a non-negative integer in minor units";
    }
    if (typeof amount.currency !== "string" || !/^[A-Z]{3}$/.test(amount.currency)) return "its currency is not a code such as `EUR`";
  }
  if (policyArgs !== undefined && (typeof policyArgs !== "object" || policyArgs === null || Array.isArray(policyArgs))) {
    return "its policy arguments are not an object";
  }
  const request = {
    ...(amount === undefined ? {} : { amount_minor: amount.amount_minor as number, currency: amount.currency as string }),
    ...(policyArgs === undefined ? {} : { args: policyArgs }),
  };
  return { request, heldMinor: amount === undefined ? 0 : (amount.amount_minor as number) };
}

/** One guard call; a 4xx (the request itself was wrong) is a refusal without a record, never an exception. */
async function decide<T>(
  client: GovernorClient,
  grant: string,
  action: string,
  described: Described,
  mapping: ToolActionOptions | undefined,
  run: () => Promise<T> | T,
  signal: AbortSignal | undefined,
  approvalId: string | undefined,
): Promise<GuardResult<T>> {
  const request: GuardRequest = {
    ...described.request,
    ...(approvalId === undefined ? {} : { approval_id: approvalId }),
    ...(signal === undefined ? {} : { signal }),
  };
  let started = false;
  try {
    return await runGuard(
      client,
      grant,
      action,
      async () => {
        started = true;
        const value = await run();
        return { value, ...spentOf(mapping, value, described.heldMinor) };
      },
      request,
    );
  } catch (error) {
    // Only the decision's own 4xx is a refusal; whatever the tool throws is the tool's, for the framework to handle.
    if (started || !(error instanceof AuthorityProblemError)) throw error;
    const cause = `${error.status} \`${error.code}\`: ${error.problem.detail ?? error.problem.title}`;
    return {
      ran: false,
      decision: {
        outcome: "deny",
        ledger_id: null,
        gates: [],
        reason: `the authority server refused the request (${cause})`,
        reason_code: error.code,
        unavailable: { cause: "unreadable_response", attempts: 1, status: error.status, message: cause },
      },
    };
  }
}

/** What the tool spent: its reported cost capped at the hold, or nothing said (guard then settles the whole hold). */
function spentOf(mapping: ToolActionOptions | undefined, value: unknown, heldMinor: number): { spent_minor?: number } {
  if (mapping?.cost === undefined || heldMinor <= 0) return {};
  let reported: unknown;
  try {
    reported = mapping.cost(value);
  } catch {
    return {};
  }
  if (typeof reported !== "number" || !Number.isSafeInteger(reported) || reported < 0) return {};
  return { spent_minor: Math.min(reported, heldMinor) };
}

/** The approval a human gave, or undefined while there is none (or it cannot be read: the call stays refused). */
async function readApproval(client: GovernorClient, ledgerId: string, signal: AbortSignal | undefined): Promise<string | undefined> {
  try {
    return (await client.decisions.approval(ledgerId, signal === undefined ? {} : { signal })).approval_id;
  } catch {
    return undefined;
  }
}

/** Polls the approval until a human gave it, the wait is over or the caller aborted. */
async function waitForApproval(
  client: GovernorClient,
  ledgerId: string,
  waitMs: number,
  pollMs: number,
  signal: AbortSignal | undefined,
): Promise<string | undefined> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const approval = await readApproval(client, ledgerId, signal);
    if (approval !== undefined) return approval;
    const left = deadline - Date.now();
    if (left <= 0 || signal?.aborted === true) return undefined;
    await sleep(Math.min(pollMs, left), signal);
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}

function cut(text: string): string {
  return text.length > TOOL_CALL_LIMITS.refusalCharsMax ? `${text.slice(0, TOOL_CALL_LIMITS.refusalCharsMax - 3)}...` : text;
}

/** The refusal of a call whose arguments cannot become an action: nothing was decided and nothing ran. */
export function undescribedRefusal(tool: string, why: string): ToolRefusal {
  const reason = `\`${tool}\` cannot be described to the authority server: ${why}`;
  return {
    refused: true,
    outcome: "deny",
    gate: null,
    reason_code: null,
    reason: cut(reason),
    ledger_id: null,
    waiting_for_approval: false,
    message: cut(`refused: ${reason}; it was not run`),
  };
}

function waiting(tool: string, ledgerId: string, residual: string | undefined): ToolRefusal {
  const who = residual === undefined ? "" : ` (${residual})`;
  return {
    refused: true,
    outcome: "gated",
    gate: "policy",
    reason_code: null,
    reason: cut(`decision ${ledgerId} is waiting for a human's approval${who}`),
    ledger_id: ledgerId,
    waiting_for_approval: true,
    ...(residual === undefined ? {} : { approvable_by: residual }),
    message: cut(
      `waiting for approval: \`${tool}\` was not run; decision ${ledgerId} needs a human's approval${who}; call it again with the same arguments once approved`,
    ),
  };
}

/** The refusal the model receives: outcome, gate and reason, or why the server could not decide. */
export function refusalOf(tool: string, decision: AuthorizeResult): ToolRefusal {
  const outcome = decision.outcome === "allow" ? "deny" : decision.outcome;
  if (decision.ledger_id === null) {
    return {
      refused: true,
      outcome,
      gate: null,
      reason_code: decision.reason_code ?? null,
      reason: cut(decision.reason),
      ledger_id: null,
      waiting_for_approval: false,
      message: cut(`refused: \`${tool}\` was not run because the authority server could not decide (${decision.reason})`),
    };
  }
  if (outcome === "gated" && decision.decided_by === "policy") {
    return { ...waiting(tool, decision.ledger_id, decision.residual), reason_code: decision.reason_code };
  }
  const gate = decision.decided_by ?? "unknown";
  return {
    refused: true,
    outcome,
    gate: decision.decided_by,
    reason_code: decision.reason_code,
    reason: cut(decision.reason),
    ledger_id: decision.ledger_id,
    waiting_for_approval: false,
    message: cut(
      `refused: ${outcome} by the ${gate} gate (${decision.reason_code}): ${decision.reason}; \`${tool}\` was not run (decision ${decision.ledger_id})`,
    ),
  };
}
