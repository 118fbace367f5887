// The host's tools/call taken before the MCP SDK's protocol layer: checked once, handled, answered by the gateway itself.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type CallToolResult, ErrorCode, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { type HostCall, hostCallOf, isObject } from "./call-checks.js";
import { ProgressRelay } from "./progress.js";
import { TappedTransport } from "./tapped-transport.js";

/** Answers one host call; `progress` is set when the host asked for progress with a token of its own. */
export type HostCallHandler = (call: HostCall, signal: AbortSignal, progress: ProgressRelay | undefined) => Promise<CallToolResult>;

/**
 * The transport a host session's MCP SDK `Server` is connected to: each `tools/call` request the
 * gateway's check takes (`hostCallOf`) goes to `handle` and its answer is written to the host here;
 * every other message, and a `tools/call` the check leaves, goes to the SDK as before, whose
 * `tools/call` handler answers what the check left (its schema's error for a bad request). A
 * `notifications/cancelled` for a call in flight here aborts it, and also goes on to the SDK.
 */
export function hostCallFront(transport: Transport, handle: HostCallHandler): TappedTransport {
  const calls = new HostCalls(transport, handle);
  const front = new TappedTransport(transport, (message) => calls.take(message));
  calls.report = (error) => front.onerror?.(error);
  front.onClosed(() => calls.abortAll());
  return front;
}

/** The host's calls in flight on one transport, by JSON-RPC id, as the MCP SDK keeps its requests (the last of an id wins). */
class HostCalls {
  report: (error: Error) => void = () => undefined;
  readonly #inFlight = new Map<string | number, AbortController>();
  readonly #transport: Transport;
  readonly #handle: HostCallHandler;

  constructor(transport: Transport, handle: HostCallHandler) {
    this.#transport = transport;
    this.#handle = handle;
  }

  take(message: JSONRPCMessage): boolean {
    const call = hostCallOf(message);
    if (call !== undefined) {
      this.#run(call);
      return true;
    }
    this.#cancel(message);
    return false;
  }

  /** The connection closed: every call in flight is aborted, and none is answered. */
  abortAll(): void {
    for (const controller of this.#inFlight.values()) controller.abort();
    this.#inFlight.clear();
  }

  /** A cancellation of a call in flight here, its reason a string or absent, as the SDK reads one. */
  #cancel(message: JSONRPCMessage): void {
    const { method, params } = message as { method?: unknown; params?: unknown };
    if (method !== "notifications/cancelled" || !isObject(params) || this.#inFlight.size === 0) return;
    const { requestId, reason } = params;
    if (reason !== undefined && typeof reason !== "string") return;
    this.#inFlight.get(requestId as string | number)?.abort(reason);
  }

  #run(call: HostCall): void {
    const controller = new AbortController();
    this.#inFlight.set(call.id, controller);
    const progress = call.progressToken === undefined ? undefined : this.#relay(call.id, call.progressToken, controller.signal);
    let answer: Promise<CallToolResult>;
    try {
      answer = this.#handle(call, controller.signal, progress);
    } catch (error) {
      answer = Promise.reject(error);
    }
    answer
      .then(
        (result) => this.#send(controller.signal, { result, jsonrpc: "2.0", id: call.id }),
        (error: unknown) => this.#send(controller.signal, errorResponse(call.id, error)),
      )
      .finally(() => {
        if (this.#inFlight.get(call.id) === controller) this.#inFlight.delete(call.id);
      });
  }

  /** Writes an answer unless its call was cancelled or its connection closed (the host hears nothing, as from the SDK). */
  #send(signal: AbortSignal, message: JSONRPCMessage): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    return this.#transport.send(message).catch((error: unknown) => this.report(new Error(`Failed to send response: ${String(error)}`)));
  }

  /** The host's progress token, kept for its own notifications, sent on the call's stream (`relatedRequestId`). */
  #relay(id: string | number, token: string | number, signal: AbortSignal): ProgressRelay {
    return new ProgressRelay(async (progress, total, message) => {
      if (signal.aborted) return;
      const params = {
        progressToken: token,
        progress,
        ...(total === undefined ? {} : { total }),
        ...(message === undefined ? {} : { message }),
      };
      await this.#transport.send({ jsonrpc: "2.0", method: "notifications/progress", params }, { relatedRequestId: id });
    });
  }
}

/** A handler's failure as the MCP SDK answers it: its integer code or "internal error", and its message. */
function errorResponse(id: string | number, error: unknown): JSONRPCMessage {
  const { code, message, data } = (isObject(error) ? error : {}) as { code?: unknown; message?: unknown; data?: unknown };
  return {
    jsonrpc: "2.0",
    id,
    error: {
      code: Number.isSafeInteger(code) ? (code as number) : ErrorCode.InternalError,
      message: typeof message === "string" ? message : "Internal error",
      ...(data === undefined ? {} : { data }),
    },
  };
}
