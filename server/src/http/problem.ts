// RFC 9457 problem details. Routes and services throw `ApiProblem`; `problemResponse` is the one
// place where anything thrown becomes an HTTP response, and a 5xx never carries internals.

import { PROBLEM_CODES, problemTypeUri, type ProblemCode } from "@agent-authority/api";

export class ApiProblem extends Error {
  readonly code: ProblemCode;
  readonly status: number;
  readonly detail: string | undefined;
  readonly extensions: Readonly<Record<string, unknown>>;

  constructor(code: ProblemCode, detail?: string, extensions: Record<string, unknown> = {}) {
    super(detail ?? PROBLEM_CODES[code].title);
    this.code = code;
    this.status = PROBLEM_CODES[code].status;
    this.detail = detail;
    this.extensions = extensions;
  }
}

export interface ProblemResponse {
  readonly status: number;
  readonly body: Record<string, unknown>;
  /** Set when the error was not an expected one: the caller logs it, the client never sees it. */
  readonly internal?: unknown;
}

/**
 * Errors raised by the body parser (express/raw-body) carry a `type` and a `status`; the router
 * raises a `URIError` for a path parameter whose percent-encoding is not UTF-8.
 */
function transportProblem(error: { type?: unknown; status?: unknown }): ApiProblem | undefined {
  if (error instanceof URIError) return new ApiProblem("invalid_id", "the path holds a malformed percent-encoding");
  if (error.type === "entity.too.large") return new ApiProblem("body_too_large");
  if (error.type === "request.aborted" || error.type === "request.size.invalid") return new ApiProblem("malformed_json", "the request body was cut short");
  if (error.type === "encoding.unsupported" || error.type === "charset.unsupported") return new ApiProblem("unsupported_media_type");
  return undefined;
}

export function problemResponse(error: unknown, instance: string): ProblemResponse {
  let problem: ApiProblem | undefined;
  if (error instanceof ApiProblem) problem = error;
  else if (error !== null && typeof error === "object") problem = transportProblem(error as { type?: unknown });
  if (problem === undefined) {
    const code: ProblemCode = "internal_error";
    return {
      status: 500,
      body: { type: problemTypeUri(code), title: PROBLEM_CODES[code].title, status: 500, code, instance },
      internal: error,
    };
  }
  const body: Record<string, unknown> = {
    type: problemTypeUri(problem.code),
    title: PROBLEM_CODES[problem.code].title,
    status: problem.status,
    code: problem.code,
    ...(problem.detail === undefined ? {} : { detail: problem.detail }),
    instance,
    ...(problem.status >= 500 ? {} : problem.extensions),
  };
  return { status: problem.status, body };
}
