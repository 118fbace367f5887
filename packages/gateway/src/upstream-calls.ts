// tools/call towards one upstream past the MCP SDK's protocol layer: sent with an id of the gateway's own range, answered by id.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type CallToolResult, ErrorCode, McpError, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { answerOf, checkedCallResult, isObject, type UpstreamAnswer } from "./call-checks.js";
import { TappedTransport } from "./tapped-transport.js";

/** Called with each progress notification of a forwarded request. */
export type OnProgress = (progress: Progress) => void;

/**
 * The prefix of the gateway's own request ids (`gw-1`, `gw-2`, …). The MCP SDK's client numbers its
 * requests 0, 1, 2, …: a string id is never one of them, so neither side can take the other's answer.
 */
const OWN_ID = "gw-";

export interface LaneOptions {
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
  /** When set, the upstream gets a progress token (the request's id), and each progress restarts the timeout. */
  readonly onProgress?: OnProgress | undefined;
}

/**
 * The transport of one upstream connection, and the `tools/call` requests sent on it by the gateway
 * itself. The MCP SDK's client is connected to `transport`: it sends and reads everything else
 * (initialize, lists, reads, notifications) as before; a response whose id is of the gateway's range,
 * and a progress notification with such a token, never reach it.
 */
export class CallLane {
  readonly transport: TappedTransport;
  readonly #inner: Transport;
  readonly #pending = new Map<string, PendingCall>();
  #sent = 0;
  #closed = false;

  constructor(inner: Transport) {
    this.#inner = inner;
    this.transport = new TappedTransport(inner, (message) => this.#take(message as unknown as Record<string, unknown>));
    this.transport.onClosed(() => this.#closeAll());
  }

  /** Sends one `tools/call`; answers the upstream's result object, not yet checked as a tool result. */
  request(name: string, args: Record<string, unknown>, options: LaneOptions): Promise<Record<string, unknown>> {
    if (options.signal.aborted) return Promise.reject(options.signal.reason);
    if (this.#closed) return Promise.reject(new Error("Not connected"));
    this.#sent += 1;
    const id = `${OWN_ID}${this.#sent}`;
    return new Promise((resolve, reject) => {
      const pending = new PendingCall(id, this, options, resolve, reject);
      this.#pending.set(id, pending);
      const params = { name, arguments: args, ...(options.onProgress === undefined ? {} : { _meta: { progressToken: id } }) };
      this.#inner.send({ method: "tools/call", params, jsonrpc: "2.0", id }).catch((error: unknown) => pending.fail(error));
    });
  }

  forget(id: string): void {
    this.#pending.delete(id);
  }

  /** Tells the upstream that a request was given up (cancelled by the host, or timed out), as the SDK does. */
  cancelUpstream(id: string, reason: unknown): void {
    if (this.#closed) return;
    const notice = { jsonrpc: "2.0" as const, method: "notifications/cancelled", params: { requestId: id, reason: String(reason) } };
    this.#inner.send(notice).catch(() => undefined);
  }

  /** Takes the answers and progress of the gateway's own requests; leaves every other message to the SDK. */
  #take(message: Record<string, unknown>): boolean {
    if ("method" in message) return this.#progress(message);
    const id = message.id;
    if (typeof id !== "string" || !id.startsWith(OWN_ID)) return false;
    // A late answer (after a cancellation or a timeout) or one to no request of ours is dropped.
    this.#pending.get(id)?.answer(answerOf(message));
    return true;
  }

  #progress(message: Record<string, unknown>): boolean {
    if (message.method !== "notifications/progress" || this.#pending.size === 0 || !isObject(message.params)) return false;
    const token = message.params.progressToken;
    if (typeof token !== "string" || !token.startsWith(OWN_ID)) return false;
    this.#pending.get(token)?.progress(message.params);
    return true;
  }

  /** The connection closed: every request still waiting fails, as the SDK fails its own. */
  #closeAll(): void {
    this.#closed = true;
    const closed = McpError.fromError(ErrorCode.ConnectionClosed, "Connection closed");
    for (const pending of [...this.#pending.values()]) pending.fail(closed);
    this.#pending.clear();
  }
}

/** One request waiting for its answer: its timeout, its cancellation and its progress. */
class PendingCall {
  readonly #id: string;
  readonly #lane: CallLane;
  readonly #options: LaneOptions;
  readonly #resolve: (result: Record<string, unknown>) => void;
  readonly #reject: (error: unknown) => void;
  #timer: ReturnType<typeof setTimeout>;

  constructor(
    id: string,
    lane: CallLane,
    options: LaneOptions,
    resolve: (result: Record<string, unknown>) => void,
    reject: (error: unknown) => void,
  ) {
    this.#id = id;
    this.#lane = lane;
    this.#options = options;
    this.#resolve = resolve;
    this.#reject = reject;
    this.#timer = setTimeout(this.#timedOut, options.timeoutMs);
    options.signal.addEventListener("abort", this.#aborted, { once: true });
  }

  readonly #timedOut = (): void =>
    this.#cancel(McpError.fromError(ErrorCode.RequestTimeout, "Request timed out", { timeout: this.#options.timeoutMs }));

  readonly #aborted = (): void => this.#cancel(this.#options.signal.reason);

  #cancel(reason: unknown): void {
    this.#end();
    this.#lane.cancelUpstream(this.#id, reason);
    this.#reject(reason instanceof McpError ? reason : new McpError(ErrorCode.RequestTimeout, String(reason)));
  }

  answer(answer: UpstreamAnswer): void {
    this.#end();
    if (answer.kind === "result") this.#resolve(answer.result as Record<string, unknown>);
    else if (answer.kind === "error") this.#reject(answer.error);
    else this.#reject(new McpError(ErrorCode.InvalidRequest, `the upstream's response to \`tools/call\` is malformed: ${answer.reason}`));
  }

  fail(error: unknown): void {
    this.#end();
    this.#reject(error);
  }

  /** A progress notification as the SDK reads one (`progress` a number, `total` a number, `message` a string); others are dropped. */
  progress(params: Record<string, unknown>): void {
    const { progress, total, message } = params;
    const onProgress = this.#options.onProgress;
    if (onProgress === undefined || typeof progress !== "number") return;
    if ((total !== undefined && typeof total !== "number") || (message !== undefined && typeof message !== "string")) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(this.#timedOut, this.#options.timeoutMs);
    onProgress({ progress, ...(total === undefined ? {} : { total }), ...(message === undefined ? {} : { message }) });
  }

  #end(): void {
    clearTimeout(this.#timer);
    this.#options.signal.removeEventListener("abort", this.#aborted);
    this.#lane.forget(this.#id);
  }
}

/** What the MCP SDK's client knows of each listed tool: whether it runs only as a task, and its output schema's validator. */
interface ToolChecks {
  isToolTaskRequired(name: string): boolean;
  getToolOutputValidator(name: string): ((input: unknown) => { valid: boolean; errorMessage?: string | undefined }) | undefined;
}

/**
 * One `tools/call` through the lane, with the checks the MCP SDK's `Client.callTool` makes around
 * it: a tool that runs only as a task is refused, the result is checked once (`checkedCallResult`),
 * and a tool with an output schema must answer structured content that matches it. The checks read
 * the client's own tables (kept from its tool lists); a client without them (another version of the
 * SDK, pinned in package.json) has the call made by `Client.callTool` with the same result check.
 */
export async function callTool(
  lane: CallLane,
  client: Client,
  name: string,
  args: Record<string, unknown>,
  options: LaneOptions,
): Promise<CallToolResult> {
  const checks = client as unknown as Partial<ToolChecks>;
  if (typeof checks.isToolTaskRequired !== "function" || typeof checks.getToolOutputValidator !== "function")
    return viaClient(client, name, args, options);
  if (checks.isToolTaskRequired(name))
    throw new McpError(
      ErrorCode.InvalidRequest,
      `Tool "${name}" requires task-based execution. Use client.experimental.tasks.callToolStream() instead.`,
    );
  const checked = checkedCallResult(await lane.request(name, args, options));
  if (!checked.ok) throw checked.error;
  const validator = checks.getToolOutputValidator(name);
  if (validator !== undefined) checkOutput(name, checked.result, validator);
  return checked.result;
}

/** The output schema's check, worded as the MCP SDK's client words it. */
function checkOutput(name: string, result: CallToolResult, validator: NonNullable<ReturnType<ToolChecks["getToolOutputValidator"]>>): void {
  if (!result.structuredContent && !result.isError)
    throw new McpError(ErrorCode.InvalidRequest, `Tool ${name} has an output schema but did not return structured content`);
  if (!result.structuredContent) return;
  let checked: { valid: boolean; errorMessage?: string | undefined };
  try {
    checked = validator(result.structuredContent);
  } catch (error) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `Failed to validate structured content: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (!checked.valid)
    throw new McpError(ErrorCode.InvalidParams, `Structured content does not match the tool's output schema: ${checked.errorMessage}`);
}

/** The result schema handed to `Client.callTool` on the fallback path: the same check, the upstream's own object answered. */
const CHECKED_IN_PLACE = Object.freeze({
  safeParse(data: unknown): { success: true; data: unknown } | { success: false; error: unknown } {
    const checked = checkedCallResult(data);
    return checked.ok ? { success: true, data: checked.result } : { success: false, error: checked.error };
  },
});

async function viaClient(client: Client, name: string, args: Record<string, unknown>, options: LaneOptions): Promise<CallToolResult> {
  const { signal, timeoutMs: timeout, onProgress } = options;
  const requestOptions = { signal, timeout, ...(onProgress === undefined ? {} : { onprogress: onProgress, resetTimeoutOnProgress: true }) };
  return (await client.callTool({ name, arguments: args }, CHECKED_IN_PLACE as never, requestOptions)) as CallToolResult;
}
