// A transport that sees each incoming message before the MCP SDK does, and keeps the ones it handles itself.
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, MessageExtraInfo } from "@modelcontextprotocol/sdk/types.js";

/** Takes one incoming message, already parsed: true when it handled it, false to pass it on to the MCP SDK. */
export type Tap = (message: JSONRPCMessage, extra: MessageExtraInfo | undefined) => boolean;

/**
 * Stands between a transport and the MCP SDK's protocol layer, which is connected to this object in
 * its place. Every message the transport reads goes to `tap` first; what the tap leaves goes on to the
 * SDK, unchanged. Sending, closing, the session id and the protocol version go to the transport
 * itself, so the SDK's own requests and answers are written exactly as before. The gateway's own
 * dispatch of `tools/call` is a tap (docs/decisions/1950-own-tools-call-dispatch.md).
 */
export class TappedTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;
  readonly #inner: Transport;
  readonly #tap: Tap;
  readonly #closed: (() => void)[] = [];

  constructor(inner: Transport, tap: Tap) {
    this.#inner = inner;
    this.#tap = tap;
  }

  /** Runs `listener` when the transport closes, before the SDK hears of it. */
  onClosed(listener: () => void): void {
    this.#closed.push(listener);
  }

  get sessionId(): string | undefined {
    return this.#inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.#inner.setProtocolVersion?.(version);
  }

  /** Takes the transport's callbacks (keeping any set before, which run first) and starts it. */
  async start(): Promise<void> {
    const inner = this.#inner;
    const closedBefore = inner.onclose;
    const errorBefore = inner.onerror;
    inner.onclose = () => {
      closedBefore?.();
      for (const listener of this.#closed) listener();
      this.onclose?.();
    };
    inner.onerror = (error) => {
      errorBefore?.(error);
      this.onerror?.(error);
    };
    inner.onmessage = (message, extra) => {
      if (!this.#tap(message, extra)) this.onmessage?.(message, extra);
    };
    await inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.#inner.send(message, options);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}
