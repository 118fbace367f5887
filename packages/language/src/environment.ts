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
export const FUNCTION_ARITY = Object.freeze({
  startsWith: 2,
  endsWith: 2,
  size: 1,
  lower: 1,
  // The path and URL functions (paths.ts).
  pathWithin: 2,
  pathNormalize: 1,
  relPathWithin: 2,
  relPathNormalize: 1,
  urlWithin: 2,
  urlScheme: 1,
  urlHost: 1,
  urlPort: 1,
  urlPath: 1,
  fileUriPath: 1,
} as const);
export type FunctionName = keyof typeof FUNCTION_ARITY;

/**
 * The same tables as Maps, which is how every lookup by a name from policy text goes: a name such
 * as `constructor` or `__proto__` is an own key of no Map, whereas a plain object would answer it
 * from `Object.prototype` (docs/decisions/0115-no-inherited-names.md).
 */
export const ENVIRONMENT_TYPE_OF: ReadonlyMap<string, (typeof ENVIRONMENT_TYPES)[keyof typeof ENVIRONMENT_TYPES]> = new Map(
  Object.entries(ENVIRONMENT_TYPES),
);
export const FUNCTION_ARITY_OF: ReadonlyMap<string, number> = new Map(Object.entries(FUNCTION_ARITY));
export const FUNCTION_NAMES: readonly string[] = Object.freeze(Object.keys(FUNCTION_ARITY));

/** An environment whose `approver` may be left out: unknown, so that a policy is decided as with no approval yet. */
export type EnvironmentInput = Omit<PolicyEnvironment, "approver"> & { approver?: string | null };

/**
 * A JSON value checked as an environment: every name of ENVIRONMENT_TYPES of its type and range
 * (`approver` a string, null, or absent), `args` an object or absent (none), and no other name;
 * or the first thing wrong with it (lower case, the name in backticks). `args: null` is refused
 * as `POST /v1/authorize` refuses it: absent means no arguments, null is not an object.
 */
export function checkEnvironment(input: unknown): { env: EnvironmentInput } | { problem: string } {
  if (input === null || typeof input !== "object" || Array.isArray(input))
    return { problem: "the input must be a JSON object of the names a policy reads" };
  const given = input as Record<string, unknown>;
  const unknown = Object.keys(given).find((k) => !ENVIRONMENT_TYPE_OF.has(k) && k !== "args");
  if (unknown !== undefined) return { problem: `unknown name \`${unknown}\` in the input` };
  for (const [name, type] of ENVIRONMENT_TYPE_OF) {
    const value = given[name];
    if (type === "approver") {
      if (value !== undefined && value !== null && typeof value !== "string")
        return { problem: "`approver` must be a string or null (or absent: unknown)" };
      continue;
    }
    if (value === undefined) return { problem: `the input has no \`${name}\`` };
    if (type === "int" && !(Number.isSafeInteger(value) && (value as number) >= 0))
      return { problem: `\`${name}\` must be a whole number, 0 or more` };
    if (type === "string" && typeof value !== "string") return { problem: `\`${name}\` must be a string` };
  }
  if ((given["hour_utc"] as number) > 23) return { problem: "`hour_utc` must be 0 to 23" };
  if (!(WEEKDAYS as readonly unknown[]).includes(given["weekday_utc"]))
    return { problem: `\`weekday_utc\` must be one of ${WEEKDAYS.map((d) => `\`${d}\``).join(", ")}` };
  const args = given["args"];
  if (args === undefined) return { env: { ...(given as unknown as EnvironmentInput), args: {} } };
  if (args === null || typeof args !== "object" || Array.isArray(args))
    return { problem: "`args` must be an object (leave it out for no arguments)" };
  return { env: given as unknown as EnvironmentInput };
}
