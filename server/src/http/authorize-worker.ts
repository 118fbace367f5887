// The authorize worker: a thread of its own that owns a second SQLite connection and runs the whole
// decision transaction (read, decide, seal, group commit and its fsync) for the hot path. The main
// thread keeps HTTP, authentication and validation, so neither waits for the other, and the disk's
// wait for a commit blocks only this thread while the main one goes on reading requests.
//
// Runs from the compiled server only (see authorize-thread.ts); the messages are in that file.

import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { authorizeAction } from "../services/decisions/index.js";
import type { ServiceContext } from "../services/common/index.js";
import { openStore } from "../store/core/index.js";
import { StoreObservations } from "../store/sql/index.js";
import { derivedKey, parseServerKey } from "../server-key.js";
import { Signer } from "../services/seal/index.js";
import type { Answer, WorkerReply, WorkerRequest, WorkerSettings } from "./authorize-thread.js";
import { ContentionError } from "../store/sql/index.js";
import { knownProblem } from "./problem.js";
import { Refusal, refusalFields } from "../services/common/index.js";

if (parentPort === null) throw new Error("authorize-worker.js runs as a worker thread");
const port: MessagePort = parentPort;
const settings = workerData as WorkerSettings;
// Every statement of this connection is small, so its temporary storage stays in memory (open.ts).
// It writes nearly every commit, so the log's copying into the database runs on a thread of its
// own, out of the commits that answers wait for (sqlite-driver.ts).
// What this connection counts reaches the main thread's metrics with the answers.
const observations = new StoreObservations();
const store = openStore(settings.databaseUrl, { temporaryInMemory: true, checkpointThread: true, observations });
const serverKey = parseServerKey(settings.serverKey, "the server key");
// The main thread made the first signing key before starting this thread; this one only reads them.
const signer = new Signer(derivedKey(serverKey, "signing-key-seal"));
await signer.load(store, Date.now());
const ctx: ServiceContext = {
  store,
  environment: settings.environment,
  autoApprovalCeilingMinor: settings.autoApprovalCeilingMinor,
  now: Date.now,
  signer,
  cursorKey: derivedKey(serverKey, "cursor"),
  ...(settings.holdLifetimeMs === undefined ? {} : { holdLifetimeMs: settings.holdLifetimeMs }),
  ...(settings.faults === undefined ? {} : { faults: settings.faults }),
};

// Answers finished in one turn (a batch resolves together) go back in one message.
let outbox: Answer[] = [];
function send(answer: Answer): void {
  if (outbox.length === 0) {
    setImmediate(() => {
      const answers = outbox;
      outbox = [];
      port.postMessage({
        type: "answers",
        answers,
        ...(observations.touched ? { observed: observations.take() } : {}),
      } satisfies WorkerReply);
    });
  }
  outbox.push(answer);
}

port.on("message", (message: WorkerRequest) => {
  if (message.type === "refresh-signing-keys") {
    // A key that cannot be read again leaves the one in use, which the JWKS still lists.
    void signer.load(store, Date.now()).catch(() => undefined);
    return;
  }
  if (message.type === "close") {
    void store.close().finally(() => port.postMessage({ type: "closed" } satisfies WorkerReply));
    return;
  }
  for (const { id, keyHash, body, claim } of message.requests) {
    authorizeAction(ctx, { keyHash }, body, claim).then(
      (answer) => send(answer instanceof Refusal ? { id, refusal: refusalFields(answer) } : { id, answer }),
      (error: unknown) => {
        // A refusal thrown, and contention, cross the thread as the refusal they answer (a class does not survive the message).
        const refusal = error instanceof Refusal || error instanceof ContentionError ? knownProblem(error)! : undefined;
        send(
          refusal !== undefined
            ? { id, refusal: refusalFields(refusal) }
            : { id, message: error instanceof Error ? (error.stack ?? error.message) : String(error) },
        );
      },
    );
  }
});
port.postMessage({ type: "ready" } satisfies WorkerReply);
