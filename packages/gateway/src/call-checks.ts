// What the gateway's own dispatch of tools/call checks: the host's request, and the upstream's answer and result.
import { type CallToolResult, CallToolResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";

/** A host's `tools/call`, as the gateway's handler needs it. */
export interface HostCall {
  readonly id: string | number;
  readonly name: string;
  readonly args: Record<string, unknown>;
  readonly progressToken: string | number | undefined;
}

/** The members a JSON-RPC request may have (the MCP SDK's request schema is strict). */
const REQUEST_MEMBERS: ReadonlySet<string> = new Set(["jsonrpc", "id", "method", "params"]);
/** MCP's key of a related task in `_meta`: a request or result naming one is left to the MCP SDK. */
const RELATED_TASK = "io.modelcontextprotocol/related-task";

/** A JSON object: not null, not an array. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A JSON-RPC id as MCP takes it: a string, or an integer JavaScript holds exactly. */
export function isRequestId(value: unknown): value is string | number {
  return typeof value === "string" || Number.isSafeInteger(value);
}

function onlyMembers(value: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
}

/** A request's `_meta`, when the call's own dispatch takes it: absent, or with a progress token of the right type and no task. */
function plainMeta(meta: unknown): meta is { progressToken?: string | number } | undefined {
  if (meta === undefined) return true;
  if (!isObject(meta) || meta[RELATED_TASK] !== undefined) return false;
  return meta.progressToken === undefined || isRequestId(meta.progressToken);
}

/**
 * The host's `tools/call` when the gateway's own dispatch takes it: a JSON-RPC request with only
 * the members a request has, a string or safe integer id, `params` an object with `name` a string,
 * `arguments` an object or absent, and `_meta.progressToken` a string or integer or absent. Anything
 * else answers `undefined` and is left to the MCP SDK, which answers it exactly as before (its
 * schema's error for a bad request, nothing for a message that is not one). So this check accepts
 * only what the SDK's `CallToolRequestSchema` accepts; a request for a task (`params.task`, a
 * related task in `_meta`) is also left to the SDK, which refuses it for a gateway that offers none.
 */
export function hostCallOf(message: unknown): HostCall | undefined {
  if (!isObject(message) || message.method !== "tools/call" || message.jsonrpc !== "2.0") return undefined;
  const { id, params } = message;
  if (!isRequestId(id) || !isObject(params) || !onlyMembers(message, REQUEST_MEMBERS)) return undefined;
  const { name, arguments: args, _meta: meta } = params;
  if (typeof name !== "string" || params.task !== undefined || !plainMeta(meta)) return undefined;
  if (args !== undefined && !isObject(args)) return undefined;
  return { id, name, args: args ?? {}, progressToken: meta?.progressToken };
}

/** A content block the check reads without the SDK: text and nothing the schema would look into. */
function plainTextBlock(block: unknown): boolean {
  return (
    isObject(block) &&
    block.type === "text" &&
    typeof block.text === "string" &&
    block.annotations === undefined &&
    block._meta === undefined
  );
}

/** Whether a result has the shape of the usual tool result, each member of the type `CallToolResultSchema` asks. */
function plainResult(result: Record<string, unknown>): boolean {
  const { content, isError, structuredContent } = result;
  if (result._meta !== undefined) return false;
  if (isError !== undefined && typeof isError !== "boolean") return false;
  if (structuredContent !== undefined && !isObject(structuredContent)) return false;
  if (content === undefined) return true;
  if (!Array.isArray(content)) return false;
  for (const block of content) if (!plainTextBlock(block)) return false;
  return true;
}

export type CheckedResult = { readonly ok: true; readonly result: CallToolResult } | { readonly ok: false; readonly error: Error };

/**
 * An upstream's `tools/call` result, checked once and not copied: a result of the usual shape (an
 * object, `content` an array of text blocks or absent, `isError` a boolean if there,
 * `structuredContent` an object if there, no `_meta`) is read by hand; any other goes to
 * `CallToolResultSchema`, as every result did before, and is refused with the schema's error
 * when the schema refuses it. The upstream's own object is answered; a result without `content`
 * gets a shallow copy with the schema's one default (`content: []`).
 */
export function checkedCallResult(result: unknown): CheckedResult {
  if (isObject(result) && plainResult(result)) return { ok: true, result: withContent(result, result) };
  const checked = CallToolResultSchema.safeParse(result);
  if (!checked.success) return { ok: false, error: checked.error };
  return { ok: true, result: withContent(result as Record<string, unknown>, checked.data) };
}

function withContent(result: Record<string, unknown>, copy: Record<string, unknown>): CallToolResult {
  if (Array.isArray(result.content)) return result as CallToolResult;
  return (copy === result ? { ...result, content: [] } : copy) as CallToolResult;
}

/** What an upstream answered to one request: its result, its error, or a message that is neither. */
export type UpstreamAnswer =
  | { readonly kind: "result"; readonly result: unknown }
  | { readonly kind: "error"; readonly error: McpError }
  | { readonly kind: "malformed"; readonly reason: string };

const RESULT_MEMBERS: ReadonlySet<string> = new Set(["jsonrpc", "id", "result"]);
const ERROR_MEMBERS: ReadonlySet<string> = new Set(["jsonrpc", "id", "error"]);

/**
 * A JSON-RPC response, read as the MCP SDK reads one: a result is an object beside `jsonrpc` and
 * `id` only; an error is an object with an integer `code` and a string `message`. Anything else is
 * malformed (the SDK would drop it and the call would wait for its timeout; here it fails at once).
 */
export function answerOf(message: Record<string, unknown>): UpstreamAnswer {
  if ("result" in message) {
    if (isObject(message.result) && onlyMembers(message, RESULT_MEMBERS)) return { kind: "result", result: message.result };
    return { kind: "malformed", reason: "its result is not an object, or the response has members a response does not have" };
  }
  const error = message.error;
  if (isObject(error) && Number.isSafeInteger(error.code) && typeof error.message === "string" && onlyMembers(message, ERROR_MEMBERS))
    return { kind: "error", error: McpError.fromError(error.code as number, error.message, error.data) };
  return { kind: "malformed", reason: "it is neither a result nor an error with an integer code and a string message" };
}
