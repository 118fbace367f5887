// Typed parameters: checking a value against its declared type and bounds.
import { setOwn } from "./own.js";
import type { ParameterSpec, ParameterValue } from "./schema.js";

export interface ParameterProblem {
  /** Stable code: `parameter-unknown`, `parameter-missing`, `parameter-type` or `parameter-bounds`. */
  readonly code: "parameter-unknown" | "parameter-missing" | "parameter-type" | "parameter-bounds";
  readonly parameter: string;
  readonly message: string;
}

/** Patterns match the whole value: `^(?:pattern)$`. Returns undefined for an invalid pattern. */
export function parameterRegExp(pattern: string): RegExp | undefined {
  try {
    return new RegExp(`^(?:${pattern})$`, "u");
  } catch {
    return undefined;
  }
}

/** Problems with one value for one parameter; empty when the value is allowed. */
export function checkParameter(name: string, spec: ParameterSpec, value: unknown): ParameterProblem[] {
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
        return problem("parameter-bounds", `parameter \`${name}\` is \`${value}\`, not one of ${spec.enum.map((v) => `\`${v}\``).join(", ")}`);
      }
      if (spec.pattern !== undefined && !(parameterRegExp(spec.pattern)?.test(value) ?? false)) {
        return problem("parameter-bounds", `parameter \`${name}\` is \`${value}\`, which does not match \`${spec.pattern}\``);
      }
      return [];
    }
    case "bool":
      return typeof value === "boolean" ? [] : problem("parameter-type", `parameter \`${name}\` must be \`true\` or \`false\`, not \`${JSON.stringify(value)}\``);
  }
}

/**
 * The values an instantiation uses: the given ones over the defaults, each checked. Reports every
 * problem, never just the first.
 */
export function resolveParameters(
  specs: Readonly<Record<string, ParameterSpec>>,
  given: Readonly<Record<string, unknown>>,
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
    const found = checkParameter(name, spec, value);
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
