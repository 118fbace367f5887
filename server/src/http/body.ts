// Request bodies: read raw up to the size limit, parsed as JSON in one place, nesting bounded,
// then validated with ajv against the schemas of @agent-authority/api.

import { API_LIMITS, allSchemas, findUnstorableText, textFaultMessage, type RequestSchemaName } from "@agent-authority/api";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import { Refusal } from "../services/common/index.js";

const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true, useDefaults: false });
for (const schema of allSchemas) ajv.addSchema(schema);

const validators = new Map<string, ValidateFunction>();
function validatorFor(name: RequestSchemaName): ValidateFunction {
  let validate = validators.get(name);
  if (validate === undefined) {
    validate = ajv.getSchema(name);
    if (validate === undefined) throw new Error(`no schema named ${name}`);
    validators.set(name, validate);
  }
  return validate;
}

/** Depth of nested arrays and objects, walking no further than the limit (an explicit stack, no recursion). */
export function jsonDepthExceeds(value: unknown, max: number): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (current === null || typeof current !== "object") continue;
    if (depth + 1 > max) return true;
    for (const child of Object.values(current)) stack.push({ value: child, depth: depth + 1 });
  }
  return false;
}

function isJsonMediaType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  return type === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

/**
 * Parses a raw body. An empty body reads as `undefined`; a non-empty one must be JSON, declared
 * as such, nest no deeper than the limit, and hold no text v1 does not store (decision 0306).
 */
export function parseJsonBody(raw: Buffer | undefined, contentType: string | undefined): unknown {
  if (raw === undefined || raw.length === 0) return undefined;
  if (!isJsonMediaType(contentType)) throw new Refusal("unsupported_media_type", "send the body with `content-type: application/json`");
  let value: unknown;
  try {
    value = JSON.parse(raw.toString("utf8"));
  } catch (error) {
    throw new Refusal("malformed_json", error instanceof SyntaxError ? error.message : undefined);
  }
  if (jsonDepthExceeds(value, API_LIMITS.requestJsonDepthMax)) {
    throw new Refusal("body_too_deep", `bodies nest at most ${API_LIMITS.requestJsonDepthMax} levels`);
  }
  // One rule of text for every field of every endpoint, before any schema or store sees it. NUL
  // and lone surrogates reach a parsed value only through `\u` escapes (a raw NUL is not JSON, and
  // UTF-8 decoding turns a lone surrogate's bytes into U+FFFD), so a body without one skips the walk.
  const fault = raw.includes("\\u") ? findUnstorableText(value) : undefined;
  if (fault !== undefined) {
    const message = textFaultMessage(fault);
    throw new Refusal("invalid_text", message, { errors: [{ pointer: fault.pointer, message, code: "invalid_text" }] });
  }
  return value;
}

function pointerOf(error: ErrorObject): string {
  if (error.keyword === "additionalProperties") {
    return `${error.instancePath}/${String((error.params as { additionalProperty: string }).additionalProperty)}`;
  }
  if (error.keyword === "required") return `${error.instancePath}/${String((error.params as { missingProperty: string }).missingProperty)}`;
  return error.instancePath === "" ? "/" : error.instancePath;
}

function messageOf(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "additionalProperties":
      return `unknown field \`${String(params["additionalProperty"])}\``;
    case "required":
      return `missing required field \`${String(params["missingProperty"])}\``;
    case "dependentRequired":
      return `\`${String(params["property"])}\` needs \`${String(params["missingProperty"])}\``;
    case "enum":
      return `must be one of ${(params["allowedValues"] as unknown[]).map((v) => `\`${String(v)}\``).join(", ")}`;
    default:
      return error.message ?? "is invalid";
  }
}

/** Validates a parsed body against a request schema; throws `unknown_field` or `invalid_body`. */
export function validateBody<T>(name: RequestSchemaName, value: unknown): T {
  const validate = validatorFor(name);
  if (validate(value)) return value as T;
  const raw = validate.errors ?? [];
  const errors = raw
    .filter((e) => e.keyword !== "if")
    .map((e) => ({
      pointer: pointerOf(e),
      message: messageOf(e),
      code: e.keyword === "additionalProperties" ? "unknown_field" : e.keyword,
    }));
  const unknown = errors.filter((e) => e.code === "unknown_field");
  if (unknown.length > 0 && unknown.length === errors.length) {
    throw new Refusal("unknown_field", `v1 does not define ${unknown.map((e) => `\`${e.pointer}\``).join(", ")}`, { errors });
  }
  const first = errors[0];
  throw new Refusal("invalid_body", first === undefined ? undefined : `${first.pointer}: ${first.message}`, { errors });
}
