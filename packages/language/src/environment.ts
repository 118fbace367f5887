// The environment: the names bound in every decision and their static types.
export type Weekday = "mon" | "tue" | "wed" | "thu" | "fri" | "sat" | "sun";

/** The names bound in every decision (docs/policy-language.md). */
export interface PolicyEnvironment {
  readonly amount_minor: number;
  readonly currency: string;
  readonly tool: string;
  readonly approver: string | null;
  readonly agent: string;
  readonly principal: string;
  readonly audience: string;
  readonly uses: number;
  readonly spent_minor: number;
  readonly hour_utc: number;
  readonly weekday_utc: Weekday;
  /** The action's own arguments as JSON values; an absent name reads as `null`. */
  readonly args: Readonly<Record<string, unknown>>;
}

/** The static type of each name other than `args` (whose fields are dynamic). */
export const ENVIRONMENT_TYPES = Object.freeze({
  amount_minor: "int",
  currency: "string",
  tool: "string",
  approver: "approver",
  agent: "string",
  principal: "string",
  audience: "string",
  uses: "int",
  spent_minor: "int",
  hour_utc: "int",
  weekday_utc: "string",
} as const);

/** Every name a policy may use, `args` included (as `args.<name>`). */
export const ENVIRONMENT_NAMES: readonly (keyof PolicyEnvironment)[] = Object.freeze([
  ...(Object.keys(ENVIRONMENT_TYPES) as (keyof typeof ENVIRONMENT_TYPES)[]),
  "args",
]);

export const WEEKDAYS: readonly Weekday[] = Object.freeze(["mon", "tue", "wed", "thu", "fri", "sat", "sun"]);

/** The functions of the language and their arities. */
export const FUNCTION_ARITY = Object.freeze({ startsWith: 2, endsWith: 2, size: 1, lower: 1 } as const);
export type FunctionName = keyof typeof FUNCTION_ARITY;

/**
 * The same tables as Maps, which is how every lookup by a name from policy text goes: a name such
 * as `constructor` or `__proto__` is an own key of no Map, whereas a plain object would answer it
 * from `Object.prototype` (docs/decisions/0115-no-inherited-names.md).
 */
export const ENVIRONMENT_TYPE_OF: ReadonlyMap<string, (typeof ENVIRONMENT_TYPES)[keyof typeof ENVIRONMENT_TYPES]> = new Map(Object.entries(ENVIRONMENT_TYPES));
export const FUNCTION_ARITY_OF: ReadonlyMap<string, number> = new Map(Object.entries(FUNCTION_ARITY));
export const FUNCTION_NAMES: readonly string[] = Object.freeze(Object.keys(FUNCTION_ARITY));
