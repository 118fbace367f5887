// How one tool call becomes an action for the authority server, and what it cost once it ran.
import type { AuthorizeBody } from "@agent-authority/sdk";
import type { ToolMapping, ValueSource } from "./config.js";
import { resolvePointer } from "./pointer.js";

/** The mapping of a tool the configuration does not name: the default action, no amount, no args. */
export const DEFAULT_MAPPING: ToolMapping = Object.freeze({
  tool: undefined,
  amount: undefined,
  currency: undefined,
  args: Object.freeze([]),
  cost: undefined,
});

/** The action's tool name: the mapping's, or `<upstream>.<tool>`. */
export function actionTool(upstream: string, tool: string, mapping: ToolMapping): string {
  return mapping.tool ?? `${upstream}.${tool}`;
}

export type Action =
  | { readonly ok: true; readonly body: Omit<AuthorizeBody, "grant_id" | "attestation" | "approval_id">; readonly heldMinor: number }
  | { readonly ok: false; readonly reason: string };

/** The action for a call; a missing or ill-typed amount or currency refuses it rather than deciding on less. */
export function actionOf(tool: string, mapping: ToolMapping, callArgs: Readonly<Record<string, unknown>>): Action {
  const amount = read(mapping.amount, callArgs);
  const currency = read(mapping.currency, callArgs);
  if (mapping.amount !== undefined && (typeof amount !== "number" || !Number.isSafeInteger(amount) || amount < 0)) {
    return { ok: false, reason: `the amount at \`${where(mapping.amount)}\` is not a non-negative integer in minor units` };
  }
  if (mapping.currency !== undefined && (typeof currency !== "string" || !/^[A-Z]{3}$/.test(currency))) {
    return { ok: false, reason: `the currency at \`${where(mapping.currency)}\` is not a currency code such as \`EUR\`` };
  }
  const args: Record<string, unknown> = {};
  for (const arg of mapping.args) {
    const value = resolvePointer(callArgs, arg.pointer);
    // An argument the call leaves out is left out of `args` too: the policy sees it as absent.
    if (value !== undefined) args[arg.name] = value;
  }
  const body = {
    tool,
    ...(typeof amount === "number" ? { amount_minor: amount, currency: currency as string } : {}),
    ...(mapping.args.length > 0 ? { args } : {}),
  };
  return { ok: true, body, heldMinor: typeof amount === "number" ? amount : 0 };
}

function read<T>(source: ValueSource<T> | undefined, callArgs: unknown): unknown {
  if (source === undefined) return undefined;
  return source.kind === "constant" ? source.value : resolvePointer(callArgs, source.pointer);
}

function where(source: ValueSource<unknown>): string {
  return source.kind === "pointer" ? source.text : JSON.stringify(source.value);
}

export interface Spend {
  readonly amountMinor: number;
  /** Why this amount, for the log. */
  readonly basis: "result" | "held" | "failed" | "capped";
}

/**
 * What to settle. A failed call spent nothing it can report (zero, the hold is released); a cost
 * found in the result is captured up to the hold; otherwise the whole hold is captured, since an
 * unknown spend is counted in full rather than released.
 */
export function spendOf(mapping: ToolMapping, heldMinor: number, result: unknown, failed: boolean): Spend {
  const reported = mapping.cost === undefined ? undefined : resolvePointer(result, mapping.cost.pointer);
  const valid = typeof reported === "number" && Number.isSafeInteger(reported) && reported >= 0;
  if (failed && !valid) return { amountMinor: 0, basis: "failed" };
  if (!valid) return { amountMinor: heldMinor, basis: "held" };
  return reported > heldMinor ? { amountMinor: heldMinor, basis: "capped" } : { amountMinor: reported, basis: "result" };
}
