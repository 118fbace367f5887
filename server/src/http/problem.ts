// RFC 9457 problem details: the one module of the server that gives a refusal's code its HTTP
// status and title (the API's PROBLEM_CODES table). Services and routes throw or return a
// `Refusal`; `problemResponse` turns it, or anything else thrown, into the response, and a 5xx
// never carries internals.

import { CONTENTION_RETRY_AFTER_SECONDS, PROBLEM_CODES, problemTypeUri, UNAVAILABLE_RETRY_AFTER_SECONDS, type ProblemCode } from "@agent-authority/api";
import { ContentionError, isDatabaseUnavailable } from "../store/driver.js";
import { Refusal } from "../services/refusal.js";

export interface ProblemResponse {
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
  if (error.type === "request.aborted" || error.type === "request.size.invalid") return new Refusal("malformed_json", "the request body was cut short");
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
    "the transactions this request needed were busy with others; it was tried again up to its limit, rolled back each time, and nothing was written, "
      + "its `Idempotency-Key` included. Send the same request again after `Retry-After` seconds; with the same `Idempotency-Key` that is safe",
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
    "the database could not be reached or is failing over to its standby. Send the same request again after `Retry-After` seconds "
      + "with the same `Idempotency-Key`: if it was committed, that replays its answer; if not, it runs once",
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

export function problemResponse(error: unknown, instance: string): ProblemResponse {
  const problem = knownProblem(error);
  if (problem === undefined) {
    const code: ProblemCode = "internal_error";
    return {
      status: 500,
      body: { type: problemTypeUri(code), title: PROBLEM_CODES[code].title, status: 500, code, instance },
      headers: {},
      internal: error,
    };
  }
  const { status, title } = PROBLEM_CODES[problem.code];
  const body: Record<string, unknown> = {
    type: problemTypeUri(problem.code),
    title,
    status,
    code: problem.code,
    ...(problem.detail === undefined ? {} : { detail: problem.detail }),
    instance,
    ...(status >= 500 ? {} : problem.extensions),
  };
  if (problem.code === "unavailable") return { status, body, headers: { "retry-after": String(UNAVAILABLE_RETRY_AFTER_SECONDS) }, unavailable: true };
  if (problem.code !== "contention") return { status, body, headers: {} };
  return {
    status, body, headers: { "retry-after": String(CONTENTION_RETRY_AFTER_SECONDS) },
    ...(error instanceof ContentionError ? { contention: error } : {}),
  };
}

/** The fields of the warning logged for a `contention` answer. */
export function contentionFields(error: ContentionError): Record<string, unknown> {
  return { sqlstate: error.code, attempts: error.attempts, elapsed_ms: Math.round(error.elapsedMs) };
}
