// Progress towards the host: one strictly increasing sequence per request, across the approval wait and the upstream's own progress.
import type { Progress } from "@modelcontextprotocol/sdk/types.js";

/** Sends one `notifications/progress` with the host's own progress token. */
export type ProgressSend = (progress: number, total: number | undefined, message: string | undefined) => Promise<void>;

/**
 * The progress of one host request. MCP requires each value to be above the one before: the
 * gateway's own reports (seconds waited for approval) come first, and the upstream's values follow
 * shifted past the last of them; a value that would not increase is dropped, never sent.
 */
export class ProgressRelay {
  readonly #send: ProgressSend;
  #last = Number.NEGATIVE_INFINITY;
  /** Added to each upstream value: the last value sent before the request was forwarded. */
  #offset = 0;

  constructor(send: ProgressSend) {
    this.#send = send;
  }

  /** The last value sent; negative infinity before the first. */
  get last(): number {
    return this.#last;
  }

  /** Sends `progress` when it is above the last value sent; answers whether it was sent. */
  async report(progress: number, total: number | undefined, message: string | undefined): Promise<boolean> {
    if (!Number.isFinite(progress) || progress <= this.#last) return false;
    this.#last = progress;
    const shownTotal = total !== undefined && Number.isFinite(total) && total >= progress ? total : undefined;
    await this.#send(progress, shownTotal, message).catch(() => undefined);
    return true;
  }

  /** The request goes upstream now: the upstream's values are shifted past everything sent so far. */
  forwarding(): (progress: Progress) => void {
    this.#offset = Number.isFinite(this.#last) ? this.#last : 0;
    const offset = this.#offset;
    return (progress) => {
      void this.report(offset + progress.progress, progress.total === undefined ? undefined : offset + progress.total, progress.message);
    };
  }
}
