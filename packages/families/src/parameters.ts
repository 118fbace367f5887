// Typed parameters: checking a value against its declared type and bounds.
import { setOwn } from "./own.js";
import { compilePattern, PatternBudget } from "./patterns.js";
import { FAMILY_LIMITS, type ParameterSpec, type ParameterValue } from "./schema.js";

export interface ParameterProblem {
  /** Stable code: `parameter-unknown`, `parameter-missing`, `parameter-type` or `parameter-bounds`. */
  readonly code: "parameter-unknown" | "parameter-missing" | "parameter-type" | "parameter-bounds";
  readonly parameter: string;
  readonly message: string;
}

/**
 * Problems with one value for one parameter; empty when the value is allowed. A pattern is matched
 * on the linear-time engine within `budget` (by default that of one instantiation); a pattern the
 * engine refuses, or a match the budget cannot pay for, refuses the value (fail closed).
 */
export function checkParameter(name: string, spec: ParameterSpec, value: unknown, budget = instantiationBudget()): ParameterProblem[] {
  const problem = (code: ParameterProblem["code"], message: string): ParameterProblem[] => [{ code, parameter: name, message }];
  switch (spec.type) {
    case "int": {
      if (typeof value !== "number" || !Number.isSafeInteger(value)) {
        return problem("parameter-type", `parameter \`${name}\` must be an integer, not \`${JSON.stringify(value)}\``);
      }
      if (spec.min !== undefined && value < spec.min) {
        return problem("parameter-bounds", `parameter \`${name}\` is ${value}, below its minimum ${spec.min}`);
      }
      if (spec.max !== undefined && value > spec.max) {
        return problem("parameter-bounds", `parameter \`${name}\` is ${value}, above its maximum ${spec.max}`);
      }
      return [];
    }
    case "string": {
      if (typeof value !== "string") {
        return problem("parameter-type", `parameter \`${name}\` must be a string, not \`${JSON.stringify(value)}\``);
      }
      const maxLength = spec.max_length ?? 1_024;
      if (value.length > maxLength) {
        return problem("parameter-bounds", `parameter \`${name}\` has ${value.length} characters, more than its maximum ${maxLength}`);
      }
      if (spec.enum !== undefined && !spec.enum.includes(value)) {
        return problem(
          "parameter-bounds",
          `parameter \`${name}\` is \`${value}\`, not one of ${spec.enum.map((v) => `\`${v}\``).join(", ")}`,
        );
      }
      return spec.pattern === undefined ? [] : checkPattern(name, spec.pattern, value, budget);
    }
    case "bool":
      return typeof value === "boolean"
        ? []
        : problem("parameter-type", `parameter \`${name}\` must be \`true\` or \`false\`, not \`${JSON.stringify(value)}\``);
  }
}

/** The budget of one instantiation's pattern checks. */
export function instantiationBudget(): PatternBudget {
  return new PatternBudget(FAMILY_LIMITS.patternMatchUnitsMax);
}

function checkPattern(name: string, pattern: string, value: string, budget: PatternBudget): ParameterProblem[] {
  const problem = (message: string): ParameterProblem[] => [{ code: "parameter-bounds", parameter: name, message }];
  const compiled = compilePattern(pattern);
  if (!compiled.ok) return problem(`parameter \`${name}\` cannot be checked: ${compiled.reason}`);
  const found = budget.check(compiled.pattern, value);
  if (found === "match") return [];
  if (found === "over-budget") {
    return problem(
      `parameter \`${name}\` cannot be checked: matching the values against the patterns would cost more than ${budget.units} units`,
    );
  }
  return problem(`parameter \`${name}\` is \`${value}\`, which does not match \`${pattern}\``);
}

/**
 * The values an instantiation uses: the given ones over the defaults, each checked. Reports every
 * problem, never just the first.
 */
export function resolveParameters(
  specs: Readonly<Record<string, ParameterSpec>>,
  given: Readonly<Record<string, unknown>>,
  budget = instantiationBudget(),
): { ok: true; values: Record<string, ParameterValue> } | { ok: false; problems: ParameterProblem[] } {
  const problems: ParameterProblem[] = [];
  const values: Record<string, ParameterValue> = {};
  for (const name of Object.keys(given)) {
    if (!Object.hasOwn(specs, name)) {
      problems.push({ code: "parameter-unknown", parameter: name, message: `unknown parameter \`${name}\`` });
    }
  }
  for (const [name, spec] of Object.entries(specs)) {
    const value = Object.hasOwn(given, name) ? given[name] : spec.default;
    if (value === undefined) {
      problems.push({ code: "parameter-missing", parameter: name, message: `parameter \`${name}\` is required and has no default` });
      continue;
    }
    const found = checkParameter(name, spec, value, budget);
    if (found.length > 0) problems.push(...found);
    else setOwn(values, name, value as ParameterValue);
  }
  return problems.length === 0 ? { ok: true, values } : { ok: false, problems };
}

/** A value that stands for the parameter when the family is checked: its example, default or lower bound. */
export function sampleValue(spec: ParameterSpec): ParameterValue | undefined {
  if (spec.example !== undefined) return spec.example;
  if (spec.default !== undefined) return spec.default;
  if (spec.type === "int") return spec.min;
  if (spec.type === "bool") return false;
  return spec.enum?.[0];
}
