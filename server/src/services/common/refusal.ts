// A refusal: what a service answers when it will not do what was asked. A code from the API's
// closed list of problem codes, a detail for the client, and any extension members; no HTTP
// status, which http/problem.ts alone gives it. Services throw it, or return it as a value.

import type { ProblemCode } from "@agent-authority/api";

export class Refusal extends Error {
  readonly code: ProblemCode;
  readonly detail: string | undefined;
  /** Members the answer carries besides the standard ones (`errors`, `retry_after`, …). */
  readonly extensions: Readonly<Record<string, unknown>>;

  constructor(code: ProblemCode, detail?: string, extensions: Record<string, unknown> = {}) {
    super(detail ?? code);
    this.code = code;
    this.detail = detail;
    this.extensions = extensions;
  }
}

/** A refusal as plain data, to cross a thread (a class does not survive a message). */
export interface RefusalFields {
  readonly code: ProblemCode;
  readonly detail: string | undefined;
  readonly extensions: Record<string, unknown>;
}

export function refusalFields(refusal: Refusal): RefusalFields {
  return { code: refusal.code, detail: refusal.detail, extensions: { ...refusal.extensions } };
}

export function refusalOf(fields: RefusalFields): Refusal {
  return new Refusal(fields.code, fields.detail, fields.extensions);
}
