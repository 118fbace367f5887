// Typed errors of the client: problem details for 4xx answers, unavailability for everything else.
import type { VerificationFailure } from "./verify.js";

/** An RFC 9457 problem details body as the server sends it; unknown members are kept. */
export interface ProblemDetails {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail?: string;
  readonly instance?: string;
  /** The stable machine-readable code of the problem, for example `certification_required`. */
  readonly code?: string;
  readonly [extension: string]: unknown;
}

/**
 * Why the platform could not be reached or did not answer usefully. `contention` is the server's
 * 409 of that code: its database was too busy with other requests to decide this one, nothing was
 * written, and the call may be made again (it was, on every attempt, with the same key).
 * `unverified_answer` is an answer to authorize that the client was told to verify and could not:
 * unsigned, signed by an unknown key, mis-signed, replayed or about another request; it is never
 * taken for `allow`, whatever `failOpen` says.
 */
export type UnavailableCause =
  | "network"
  | "timeout"
  | "server_error"
  | "contention"
  | "unreadable_response"
  | "aborted"
  | "unverified_answer";

/** The common base of every error this package throws, so callers can catch them in one place. */
export class AuthorityError extends Error {
  override readonly name: string = "AuthorityError";
}

/** The server answered 4xx (but `contention`): the request was malformed, unauthenticated, forbidden or in conflict. */
export class AuthorityProblemError extends AuthorityError {
  override readonly name = "AuthorityProblemError";
  readonly status: number;
  readonly problem: ProblemDetails;
  /** The problem's stable code when the server sent one, otherwise its type URI. */
  readonly code: string;

  constructor(problem: ProblemDetails, method: string, path: string) {
    super(`${method} ${path} answered ${problem.status}: ${problem.detail ?? problem.title}`);
    this.status = problem.status;
    this.problem = problem;
    this.code = problem.code ?? problem.type;
  }
}

/** Every attempt failed with a network error, a timeout, a 5xx, a 409 `contention` or an unreadable answer. */
export class AuthorityUnavailableError extends AuthorityError {
  override readonly name = "AuthorityUnavailableError";
  readonly kind: UnavailableCause;
  /** The HTTP status of the last attempt when it got one. */
  readonly status: number | undefined;
  readonly attempts: number;
  /** For `unverified_answer`: why the answer was not taken as the server's. */
  readonly verification: VerificationFailure | undefined;

  constructor(kind: UnavailableCause, message: string, attempts: number, status?: number, verification?: VerificationFailure) {
    super(message);
    this.kind = kind;
    this.status = status;
    this.attempts = attempts;
    this.verification = verification;
  }
}

/** Reads a problem details body, or builds one from the status when the body is not one. */
export function problemFrom(status: number, statusText: string, body: unknown): ProblemDetails {
  if (typeof body === "object" && body !== null && !Array.isArray(body)) {
    const record = body as Record<string, unknown>;
    return {
      ...record,
      type: typeof record["type"] === "string" ? record["type"] : "about:blank",
      title: typeof record["title"] === "string" ? record["title"] : statusText || `HTTP ${status}`,
      status,
    };
  }
  return { type: "about:blank", title: statusText || `HTTP ${status}`, status };
}
