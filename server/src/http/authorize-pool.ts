// The main thread's side of the authorize worker (authorize-worker.ts): one worker, requests sent
// with an id and answered in any order.

import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { AuthorizeBody } from "@agent-authority/api";
import { IdempotencyMismatch, type IdempotencyClaim, type PreparedAnswer } from "../services/authorize.js";
import type { Caller } from "../services/context.js";

export interface WorkerSettings {
  readonly databaseUrl: string;
  readonly environment: string;
  readonly autoApprovalCeilingMinor: number;
  readonly holdLifetimeMs: number | undefined;
}

export type WorkerRequest =
  | { readonly type: "authorize"; readonly id: number; readonly caller: Caller; readonly body: AuthorizeBody; readonly claim: IdempotencyClaim | undefined }
  | { readonly type: "close" };

export type WorkerReply =
  | { readonly type: "ready" }
  | { readonly type: "closed" }
  | { readonly type: "answer"; readonly id: number; readonly answer: PreparedAnswer }
  | { readonly type: "error"; readonly id: number; readonly mismatch: boolean; readonly message: string };

const WORKER_FILE = fileURLToPath(new URL("./authorize-worker.js", import.meta.url));

/** Whether the compiled worker is there (it is not when the server runs from its TypeScript sources). */
export function authorizeWorkerAvailable(): boolean {
  return WORKER_FILE.endsWith(".js") && existsSync(WORKER_FILE);
}

export class AuthorizeWorker {
  readonly #worker: Worker;
  readonly #pending = new Map<number, { resolve: (answer: PreparedAnswer) => void; reject: (error: unknown) => void }>();
  #next = 0;
  #failure: Error | undefined;
  #closed: Promise<void> | undefined;
  #onClosed: (() => void) | undefined;

  readonly #onFailure: (error: Error) => void;

  private constructor(worker: Worker, onFailure: (error: Error) => void) {
    this.#worker = worker;
    this.#onFailure = onFailure;
    worker.on("message", (reply: WorkerReply) => this.#receive(reply));
    worker.on("error", (error) => this.#fail(error));
    worker.on("exit", (code) => {
      this.#fail(new Error(`the authorize worker exited with code ${code}`));
      this.#onClosed?.();
    });
  }

  /** Starts the worker; `onFailure` hears once if it stops without being closed. */
  static async start(settings: WorkerSettings, onFailure: (error: Error) => void = () => undefined): Promise<AuthorizeWorker> {
    const worker = new Worker(WORKER_FILE, { workerData: settings });
    const pool = new AuthorizeWorker(worker, onFailure);
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
    return pool;
  }

  /** Why the worker stopped unasked, if it did; every authorize fails from then on (and readiness). */
  get failure(): Error | undefined {
    return this.#closed === undefined ? this.#failure : undefined;
  }

  authorize(caller: Caller, body: AuthorizeBody, claim: IdempotencyClaim | undefined): Promise<PreparedAnswer> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    const id = this.#next++;
    return new Promise<PreparedAnswer>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ type: "authorize", id, caller, body, claim } satisfies WorkerRequest);
    });
  }

  #receive(reply: WorkerReply): void {
    if (reply.type === "answer" || reply.type === "error") {
      const pending = this.#pending.get(reply.id);
      if (pending === undefined) return;
      this.#pending.delete(reply.id);
      if (reply.type === "answer") pending.resolve(reply.answer);
      else pending.reject(reply.mismatch ? new IdempotencyMismatch() : new Error(reply.message));
    } else if (reply.type === "closed") {
      void this.#worker.terminate();
    }
  }

  #fail(error: Error): void {
    if (this.#failure === undefined && this.#closed === undefined) this.#onFailure(error);
    this.#failure ??= error;
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
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
