// Validation against the family and issue-body schemas, with errors as paths and readable messages.
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import { grantIssueBodySchema } from "@agent-authority/api";
import { grantFamilyBodySchema } from "./schema.js";
import type { JsonPath } from "./locate.js";

export interface SchemaError {
  readonly path: JsonPath;
  /** Whether the error is about the key at `path` (an unknown field) rather than its value. */
  readonly at: "value" | "key";
  readonly message: string;
  readonly help?: string;
}

/** The validators, compiled on first use: compiling costs more than most commands that need none. */
let validators: { family: ValidateFunction; issue: ValidateFunction } | undefined;

function compiled(): { family: ValidateFunction; issue: ValidateFunction } {
  if (validators === undefined) {
    const ajv = new Ajv2020({ allErrors: true, verbose: true, strict: true, strictTypes: false, strictRequired: false });
    validators = {
      family: ajv.compile(grantFamilyBodySchema),
      issue: ajv.compile({ ...grantIssueBodySchema, $id: "GrantIssueBodyForFamilies" }),
    };
  }
  return validators;
}

/** Errors of a `POST /v1/grant-families` body; empty when it is valid. */
export function validateFamilyBody(body: unknown): SchemaError[] {
  const validate = compiled().family;
  return validate(body) ? [] : translate(validate.errors ?? []);
}

/** Errors of a `POST /v1/grants` body, as `@agent-authority/api` defines it. */
export function validateGrantIssueBody(body: unknown): SchemaError[] {
  const validate = compiled().issue;
  return validate(body) ? [] : translate(validate.errors ?? []);
}

function pathOf(pointer: string): (string | number)[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((step) => step.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((step) => (/^(0|[1-9][0-9]*)$/.test(step) ? Number(step) : step));
}

function fieldName(path: JsonPath): string {
  const last = path[path.length - 1];
  return last === undefined ? "the document" : typeof last === "number" ? `item ${last}` : `\`${last}\``;
}

function translate(errors: readonly ErrorObject[]): SchemaError[] {
  // A placeholder is the second branch of every templated field; when the value is no placeholder
  // at all, the errors of the first branch say what is wrong and the rest is noise.
  const relevant = errors.filter((e) => !/\/anyOf\/1\//.test(e.schemaPath) && e.keyword !== "if");
  const out: SchemaError[] = [];
  const seen = new Set<string>();
  const push = (error: SchemaError): void => {
    const id = `${error.path.join("/")}|${error.at}|${error.message}`;
    if (!seen.has(id)) {
      seen.add(id);
      out.push(error);
    }
  };
  const stringParameterPaths = new Set(
    relevant
      .filter((e) => e.keyword === "anyOf" && /parameters\/additionalProperties\/allOf\/1\/then\/anyOf$/.test(e.schemaPath))
      .map((e) => e.instancePath),
  );
  for (const error of relevant) {
    const path = pathOf(error.instancePath);
    if (stringParameterPaths.has(error.instancePath) && /allOf\/1\/then\/anyOf/.test(error.schemaPath)) {
      if (error.keyword === "anyOf") {
        push({ path, at: "value", message: "a string parameter needs `enum`, or `pattern` with an `example` or `default`" });
      }
      continue;
    }
    if (error.keyword === "anyOf" && isTemplateAnyOf(error)) continue;
    push(describe(error, path));
  }
  return out;
}

function isTemplateAnyOf(error: ErrorObject): boolean {
  const branches = (error.schema as unknown[] | undefined) ?? [];
  return branches.length === 2 && JSON.stringify(branches[1]).includes("\\\\$\\\\{");
}

/** An unknown field, with the nearest known name as help, or the known names when none is near. */
function unknownField(error: ErrorObject, path: (string | number)[], params: Record<string, unknown>): SchemaError {
  const name = String(params["additionalProperty"]);
  const known = Object.keys(((error.parentSchema as Record<string, unknown>)?.["properties"] as object | undefined) ?? {});
  const suggestion = closest(name, known);
  return {
    path: [...path, name],
    at: "key",
    message: `unknown field \`${name}\``,
    ...(suggestion !== undefined
      ? { help: `did you mean \`${suggestion}\`?` }
      : known.length > 0
        ? { help: `known fields: ${known.map((k) => `\`${k}\``).join(", ")}` }
        : {}),
  };
}

/** What is wrong with a value (as opposed to a key): its type, its allowed values, its bounds. */
function valueMessage(error: ErrorObject, path: (string | number)[], params: Record<string, unknown>): string {
  const field = fieldName(path);
  const limit = String(params["limit"]);
  switch (error.keyword) {
    case "type":
      return `${field} must be ${article(String(params["type"]))}`;
    case "enum":
      return `${field} must be one of ${((params["allowedValues"] as unknown[]) ?? []).map((v) => `\`${String(v)}\``).join(", ")}`;
    case "const":
      return `${field} must be \`${String(params["allowedValue"])}\``;
    case "pattern":
      return `\`${String(error.data)}\` does not match the pattern \`${String(params["pattern"])}\` of ${field}`;
    case "minimum":
    case "exclusiveMinimum":
      return `${field} must be at least ${limit}, not ${String(error.data)}`;
    case "maximum":
    case "exclusiveMaximum":
      return `${field} must be at most ${limit}, not ${String(error.data)}`;
    case "minLength":
      return `${field} must have at least ${limit} characters`;
    case "maxLength":
      return `${field} must have at most ${limit} characters`;
    case "minItems":
      return `${field} must have at least ${limit} items`;
    case "maxItems":
      return `${field} must have at most ${limit} items`;
    case "uniqueItems":
      return `${field} lists the same value twice (items ${String(params["j"])} and ${String(params["i"])})`;
    case "maxProperties":
      return `${field} must have at most ${limit} entries`;
    default:
      return `${field} ${error.message ?? "is invalid"}`;
  }
}

function describe(error: ErrorObject, path: (string | number)[]): SchemaError {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return { path, at: "key", message: `missing required field \`${String(params["missingProperty"])}\`` };
    case "additionalProperties":
      return unknownField(error, path, params);
    case "propertyNames":
      return {
        path: [...path, String(params["propertyName"])],
        at: "key",
        message: `\`${String(params["propertyName"])}\` is not a valid name here (lower snake case, starting with a letter)`,
      };
    case "dependentRequired":
      return { path, at: "key", message: `\`${String(params["property"])}\` needs \`${String(params["missingProperty"])}\` too` };
    default:
      return { path, at: "value", message: valueMessage(error, path, params) };
  }
}

function article(type: string): string {
  const names: Record<string, string> = {
    integer: "an integer",
    string: "a string",
    boolean: "a boolean (`true` or `false`)",
    object: "a mapping",
    array: "a list",
    number: "a number",
    null: "null",
  };
  return type
    .split(",")
    .map((t) => names[t] ?? t)
    .join(" or ");
}

/** The known name nearest to `name` by edit distance, when it is near enough to be a typo. */
export function closest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = editDistance(name, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.max(1, Math.floor(name.length / 3)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 8) return Infinity;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}
