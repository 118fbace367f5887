// RFC 9457 problem details: the one module of the server that gives a refusal's code its HTTP
// status and title (the API's PROBLEM_CODES table). Services and routes throw or return a
// `Refusal`; `problemAnswer` is the one place where it, or anything else thrown, becomes the
// answer sent (Express's error handler, the authorize hot path and the idempotent POSTs' kept
// refusals all use it), and a 5xx never carries internals.

import {
  CONTENTION_RETRY_AFTER_SECONDS,
  PROBLEM_CODES,
  problemTypeUri,
  UNAVAILABLE_RETRY_AFTER_SECONDS,
  type ProblemCode,
} from "@agent-authority/api";
import { ContentionError, isDatabaseUnavailable } from "../store/sql/index.js";
import { BEARER_CHALLENGE } from "../services/keys/index.js";
import { Refusal } from "../services/common/index.js";
import type { Logger } from "../log.js";

interface ProblemResponse {
  readonly status: number;
  readonly body: Record<string, unknown>;
  /** Headers the answer carries besides its media type (`retry-after` for `contention`). */
  readonly headers: Readonly<Record<string, string>>;
  /** Set for `contention`: what the caller logs as a warning (the SQLSTATE, tries and time spent). */
  readonly contention?: ContentionError;
  /** Set for `unavailable`: the caller logs a warning (the database is unreachable or failing over). */
  readonly unavailable?: true;
  /** Set when the error was not an expected one: the caller logs it, the client never sees it. */
  readonly internal?: unknown;
}

/**
 * Errors raised by the body parser (express/raw-body) carry a `type` and a `status`; the router
 * raises a `URIError` for a path parameter whose percent-encoding is not UTF-8.
 */
function transportProblem(error: { type?: unknown; status?: unknown }): Refusal | undefined {
  if (error instanceof URIError) return new Refusal("invalid_id", "the path holds a malformed percent-encoding");
  if (error.type === "entity.too.large") return new Refusal("body_too_large");
  if (error.type === "request.aborted" || error.type === "request.size.invalid")
    return new Refusal("malformed_json", "the request body was cut short");
  if (error.type === "encoding.unsupported" || error.type === "charset.unsupported") return new Refusal("unsupported_media_type");
  return undefined;
}

/**
 * The answer to a transaction the store gave up on after its retries (decision 0314): every try
 * was rolled back, so nothing was written, the idempotency key included, and the same request
 * may be sent again. A 409, not a 5xx: the server did not fail, the request lost a race.
 */
export function contentionProblem(): Refusal {
  return new Refusal(
    "contention",
    "the transactions this request needed were busy with others; it was tried again up to its limit, rolled back each time, and nothing was written, " +
      "its `Idempotency-Key` included. Send the same request again after `Retry-After` seconds; with the same `Idempotency-Key` that is safe",
  );
}

/**
 * The answer while the database is unreachable or failing over (decision 0316): a 503 with
 * `Retry-After`, never a 500. A transaction cut off during its COMMIT may have been committed, so
 * the detail asks for the same request with the same key, which replays it if it was.
 */
export function unavailableProblem(): Refusal {
  return new Refusal(
    "unavailable",
    "the database could not be reached or is failing over to its standby. Send the same request again after `Retry-After` seconds " +
      "with the same `Idempotency-Key`: if it was committed, that replays its answer; if not, it runs once",
  );
}

/** An error as the refusal it answers: a Refusal as it is, contention, unavailability and transport errors mapped; undefined for anything unexpected. */
export function knownProblem(error: unknown): Refusal | undefined {
  if (error instanceof Refusal) return error;
  if (error instanceof ContentionError) return contentionProblem();
  if (isDatabaseUnavailable(error)) return unavailableProblem();
  if (error !== null && typeof error === "object") return transportProblem(error as { type?: unknown });
  return undefined;
}

/** The members every problem of a code opens with, in order: `type`, `title`, `status` and `code`. */
export function problemHead(code: ProblemCode): {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly code: ProblemCode;
} {
  const { status, title } = PROBLEM_CODES[code];
  return { type: problemTypeUri(code), title, status, code };
}

function problemResponse(error: unknown, instance: string): ProblemResponse {
  const problem = knownProblem(error);
  if (problem === undefined) return { status: 500, body: { ...problemHead("internal_error"), instance }, headers: {}, internal: error };
  const head = problemHead(problem.code);
  const status = head.status;
  const body: Record<string, unknown> = {
    ...head,
    ...(problem.detail === undefined ? {} : { detail: problem.detail }),
    instance,
    ...(status >= 500 ? {} : problem.extensions),
  };
  if (problem.code === "unavailable")
    return { status, body, headers: { "retry-after": String(UNAVAILABLE_RETRY_AFTER_SECONDS) }, unavailable: true };
  if (problem.code !== "contention") return { status, body, headers: {} };
  return {
    status,
    body,
    headers: { "retry-after": String(CONTENTION_RETRY_AFTER_SECONDS) },
    ...(error instanceof ContentionError ? { contention: error } : {}),
  };
}

/** The fields of the warning logged for a `contention` answer. */
function contentionFields(error: ContentionError): Record<string, unknown> {
  return { sqlstate: error.code, attempts: error.attempts, elapsed_ms: Math.round(error.elapsedMs) };
}

export const PROBLEM_TYPE = "application/problem+json; charset=utf-8";

/** A problem as the answer sent: its status, the headers besides its media type, and its text. */
export interface ProblemAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly contentType: typeof PROBLEM_TYPE;
  readonly text: string;
  /**
   * Whether an idempotent request may keep this answer for its replays: not a 5xx, whose retry
   * must run again, nor `contention`, whose answer promises that the key was not stored (0314).
   */
  readonly keepable: boolean;
}

/** Where the warnings and errors an answer calls for are logged, under the request's id. */
export interface ProblemLog {
  readonly logger: Logger;
  readonly requestId: unknown;
}

/**
 * The one place where an error becomes an answer: a refusal, contention, unavailability,
 * a transport error, or anything unexpected (a 500 whose cause is logged, never sent). A 401
 * carries the Bearer challenge. With `log`, an internal error, contention and unavailability are
 * logged; without, nothing is (the kept answer of an idempotent request is never one of them).
 */
export function problemAnswer(error: unknown, instance: string, log?: ProblemLog): ProblemAnswer {
  const problem = problemResponse(error, instance);
  if (log !== undefined) {
    const { logger, requestId } = log;
    if (problem.internal !== undefined) {
      const internal = problem.internal;
      logger.log("error", "internal error", {
        request_id: requestId,
        error: internal instanceof Error ? (internal.stack ?? internal.message) : String(internal),
      });
    }
    if (problem.contention !== undefined)
      logger.log("warn", "contention", { request_id: requestId, ...contentionFields(problem.contention) });
    if (problem.unavailable === true) logger.log("warn", "database unavailable", { request_id: requestId, error: String(error) });
  }
  const code = problem.body["code"];
  return {
    status: problem.status,
    headers: code === "unauthenticated" ? { ...problem.headers, "www-authenticate": BEARER_CHALLENGE } : problem.headers,
    contentType: PROBLEM_TYPE,
    text: JSON.stringify(problem.body),
    keepable: problem.status < 500 && code !== "contention",
  };
}
