// The main thread's side of the authorize worker (authorize-worker.ts): one worker thread; requests
// go with an id, in one message per event-loop turn, and are answered in any order.

import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { AuthorizeBody } from "@agent-authority/api";
import type { PreparedAnswer, RequestClaim } from "../services/common/index.js";
import type { FaultHooks } from "../services/common/index.js";
import { refusalOf, type Refusal, type RefusalFields } from "../services/common/index.js";
import { Waiters } from "./waiters.js";
import { keepYoungGenerationFull } from "./worker-heap.js";
import type { ObservationDelta, StoreObservations } from "../store/sql/index.js";

export interface WorkerSettings {
  readonly databaseUrl: string;
  readonly environment: string;
  readonly autoApprovalCeilingMinor: number;
  readonly holdLifetimeMs: number | undefined;
  /** The server key in base64url: the worker opens the signing keys with it from its own connection. */
  readonly serverKey: string;
  /** The crash tests' hooks (decision 0605), absent in every real deployment. */
  readonly faults?: FaultHooks;
}

/** One authorize request; the requests of one event-loop turn travel in one message. */
export interface Request {
  readonly id: number;
  /** The hash of the key presented: the worker authenticates in the decision's transaction. */
  readonly keyHash: string;
  readonly body: AuthorizeBody;
  readonly claim: RequestClaim | undefined;
}

/** One answer, a refusal, or why there is neither; the answers of one turn travel in one message. */
export type Answer =
  | { readonly id: number; readonly answer: PreparedAnswer }
  | { readonly id: number; readonly refusal: RefusalFields }
  | { readonly id: number; readonly message: string };

export type WorkerRequest =
  | { readonly type: "authorize"; readonly requests: readonly Request[] }
  | { readonly type: "refresh-signing-keys" }
  | { readonly type: "close" };

export type WorkerReply =
  | { readonly type: "ready" }
  | { readonly type: "closed" }
  | { readonly type: "answers"; readonly answers: readonly Answer[]; readonly observed?: ObservationDelta };

const WORKER_FILE = fileURLToPath(new URL("./authorize-worker.js", import.meta.url));

/** Whether the compiled worker is there (it is not when the server runs from its TypeScript sources). */
export function authorizeWorkerAvailable(): boolean {
  return existsSync(WORKER_FILE);
}

export class AuthorizeWorker {
  readonly #worker: Worker;
  readonly #waiters = new Waiters<PreparedAnswer | Refusal>();
  #outbox: Request[] = [];
  #failure: Error | undefined;
  #closed: Promise<void> | undefined;
  #onClosed: (() => void) | undefined;

  readonly #onFailure: (error: Error) => void;
  readonly #observations: StoreObservations | undefined;

  private constructor(worker: Worker, onFailure: (error: Error) => void, observations: StoreObservations | undefined) {
    this.#worker = worker;
    this.#onFailure = onFailure;
    this.#observations = observations;
    worker.on("message", (reply: WorkerReply) => this.#receive(reply));
    worker.on("error", (error) => this.#fail(error));
    worker.on("exit", (code) => {
      this.#fail(new Error(`the authorize worker exited with code ${code}`));
      this.#onClosed?.();
    });
  }

  /**
   * Starts the worker; `onFailure` hears once if it stops without being closed. What the worker's
   * store counts (batch sizes, retries, database errors) is added to `observations`.
   */
  static async start(
    settings: WorkerSettings,
    onFailure: (error: Error) => void = () => undefined,
    observations?: StoreObservations,
  ): Promise<AuthorizeWorker> {
    keepYoungGenerationFull();
    const worker = new Worker(WORKER_FILE, { workerData: settings });
    const thread = new AuthorizeWorker(worker, onFailure, observations);
    await new Promise<void>((resolve, reject) => {
      const ready = (reply: WorkerReply): void => {
        if (reply.type === "ready") {
          worker.off("message", ready);
          resolve();
        }
      };
      worker.on("message", ready);
      worker.once("error", reject);
      worker.once("exit", (code) => reject(new Error(`the authorize worker exited with code ${code} while starting`)));
    });
    return thread;
  }

  /** Why the worker stopped unasked, if it did; every authorize fails from then on (and readiness). */
  get failure(): Error | undefined {
    return this.#closed === undefined ? this.#failure : undefined;
  }

  authorize(keyHash: string, body: AuthorizeBody, claim: RequestClaim | undefined): Promise<PreparedAnswer | Refusal> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    return new Promise<PreparedAnswer | Refusal>((resolve, reject) => {
      const id = this.#waiters.add(resolve, reject);
      if (this.#outbox.length === 0) setImmediate(() => this.#send());
      this.#outbox.push({ id, keyHash, body, claim });
    });
  }

  /** Has the worker read the signing keys again (after a rotation, here or on another replica). */
  refreshSigningKeys(): void {
    if (this.#failure === undefined && this.#closed === undefined)
      this.#worker.postMessage({ type: "refresh-signing-keys" } satisfies WorkerRequest);
  }

  /** Sends the requests of this turn in one message (they then share one batch on the worker). */
  #send(): void {
    const requests = this.#outbox;
    this.#outbox = [];
    if (this.#failure !== undefined) {
      for (const request of requests) this.#settle(request.id, undefined, this.#failure);
      return;
    }
    this.#worker.postMessage({ type: "authorize", requests } satisfies WorkerRequest);
  }

  #settle(id: number, answer: PreparedAnswer | Refusal | undefined, error: unknown): void {
    if (answer !== undefined) this.#waiters.resolve(id, answer);
    else this.#waiters.reject(id, error);
  }

  #receive(reply: WorkerReply): void {
    if (reply.type === "answers") {
      if (reply.observed !== undefined) this.#observations?.add(reply.observed);
      for (const a of reply.answers) {
        if ("answer" in a) this.#settle(a.id, a.answer, undefined);
        else if ("refusal" in a) this.#settle(a.id, refusalOf(a.refusal), undefined);
        else this.#settle(a.id, undefined, new Error(a.message));
      }
    } else if (reply.type === "closed") {
      void this.#worker.terminate();
    }
  }

  #fail(error: Error): void {
    if (this.#failure === undefined && this.#closed === undefined) this.#onFailure(error);
    this.#failure ??= error;
    this.#waiters.rejectAll(error);
  }

  /** Lets the worker close its database, then ends it. */
  close(): Promise<void> {
    this.#closed ??= new Promise<void>((resolve) => {
      this.#onClosed = resolve;
      if (this.#failure !== undefined) resolve();
      else this.#worker.postMessage({ type: "close" } satisfies WorkerRequest);
    });
    return this.#closed;
  }
}
