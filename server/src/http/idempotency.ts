// The Idempotency-Key of the Express routes: a claimed request is answered through `answerOnce`
// (services/idempotency.ts), which claims the key in the transaction of the request's effects and
// replays the stored answer to every later request with the same key. Authorize does the same
// inside its decision's transaction (services/authorize.ts).

import type { Request } from "express";
import { IDEMPOTENCY_HEADER, answerOnce, idempotencyClaim, type ClaimedWork, type FreshAnswer } from "../services/idempotency/index.js";
import type { PreparedAnswer } from "../services/common/index.js";
import type { Caller, ServiceContext } from "../services/common/index.js";
import { problemAnswer } from "./problem.js";
import type { Refusal } from "../services/common/index.js";

/** The POST endpoints that create nothing: their first answer is stored, but they run outside a transaction. */
const CREATES_NOTHING: ReadonlySet<string> = new Set(["previewGrant", "previewFamilyImpact"]);

/**
 * A problem as an answer to keep, or undefined for one that is never kept, so that a retry runs
 * again: a 5xx, and `contention` (problemAnswer's `keepable`).
 */
function keptProblem(error: unknown, path: string): FreshAnswer | undefined {
  const problem = problemAnswer(error, path);
  return problem.keepable ? { status: problem.status, contentType: problem.contentType, text: problem.text } : undefined;
}

/**
 * Answers a POST: once per Idempotency-Key when it carries one (answerOnce), or by running `run` on
 * the server's context. `run` must use only the context it is given: with a key, that context's
 * store is the transaction the key is claimed in.
 */
export async function answerPost(
  ctx: ServiceContext,
  req: Request,
  operationId: string,
  caller: Caller,
  run: (ctx: ServiceContext) => Promise<FreshAnswer>,
): Promise<PreparedAnswer> {
  const path = req.originalUrl.split("?")[0]!;
  const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  const claim = idempotencyClaim(req.headers[IDEMPOTENCY_HEADER], caller.keyId, "POST", path, raw);
  if (claim === undefined) return { ...(await run(ctx)), replayed: false };
  const work: ClaimedWork = { effects: !CREATES_NOTHING.has(operationId), run, refusal: (error) => keptProblem(error, path) };
  return answerOnce(ctx, claim, work);
}

/** The answer a replay gets instead of one that must not be stored. */
export function keptInstead(problem: Refusal | undefined, path: string): FreshAnswer["kept"] {
  return problem === undefined ? undefined : keptProblem(problem, path);
}
