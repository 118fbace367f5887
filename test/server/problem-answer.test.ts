// The one place where an error becomes an answer (http/problem.ts), the one reading of a presented
// key and the one request log line, which Express and the authorize hot path share.

import type { IncomingMessage } from "node:http";
import { Socket } from "node:net";
import { PROBLEM_CODES, problemTypeUri, type ProblemCode } from "@agent-authority/api";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Logger, LogLevel } from "../../server/src/log.js";
import { clientErrorAnswer } from "../../server/src/http/client-error.js";
import { presentedSecret } from "../../server/src/http/presented-key.js";
import { PROBLEM_TYPE, problemAnswer } from "../../server/src/http/problem.js";
import { requestLog } from "../../server/src/http/request-log.js";
import { BEARER_CHALLENGE } from "../../server/src/services/keys/index.js";
import { Refusal } from "../../server/src/services/common/index.js";
import { ContentionError } from "../../server/src/store/sql/index.js";

const CODES = Object.keys(PROBLEM_CODES) as ProblemCode[];

/** A logger that keeps what it is told, at or above `threshold`. */
function keptLogger(
  threshold: LogLevel = "debug",
): Logger & { lines: { level: LogLevel; msg: string; fields: Record<string, unknown> }[] } {
  const rank: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };
  const lines: { level: LogLevel; msg: string; fields: Record<string, unknown> }[] = [];
  return {
    lines,
    enabled: (level) => rank[level] >= rank[threshold],
    log(level, msg, fields = {}) {
      if (rank[level] >= rank[threshold]) lines.push({ level, msg, fields });
    },
  };
}

describe("problemAnswer", () => {
  it("gives every code its status and title from the one table, its members in order, and keeps only what a retry may replay", () => {
    fc.assert(
      fc.property(fc.constantFrom(...CODES), fc.option(fc.string({ maxLength: 40 }), { nil: undefined }), (code, detail) => {
        const answer = problemAnswer(new Refusal(code, detail, { errors: [{ path: "/x" }] }), "/v1/x");
        const { status, title } = PROBLEM_CODES[code];
        expect(answer.status).toBe(status);
        expect(answer.contentType).toBe(PROBLEM_TYPE);
        const body = JSON.parse(answer.text) as Record<string, unknown>;
        expect(Object.keys(body)).toEqual([
          "type",
          "title",
          "status",
          "code",
          ...(detail === undefined ? [] : ["detail"]),
          "instance",
          ...(status >= 500 ? [] : ["errors"]),
        ]);
        expect(body).toMatchObject({ type: problemTypeUri(code), title, status, code, instance: "/v1/x" });
        expect(answer.keepable).toBe(status < 500 && code !== "contention");
        expect(answer.headers["www-authenticate"]).toBe(code === "unauthenticated" ? BEARER_CHALLENGE : undefined);
      }),
      { numRuns: 300 },
    );
  });

  it("answers anything unexpected as a 500 without its internals, and logs it under the request's id", () => {
    const logger = keptLogger();
    const answer = problemAnswer(new Error("secret internals"), "/v1/y", { logger, requestId: "req-1" });
    expect(answer.status).toBe(500);
    expect(answer.text).not.toContain("secret internals");
    expect(answer.keepable).toBe(false);
    expect(logger.lines.map((l) => [l.level, l.msg, l.fields["request_id"]])).toEqual([["error", "internal error", "req-1"]]);
    expect(String(logger.lines[0]!.fields["error"])).toContain("secret internals");
  });

  it("answers contention with Retry-After, never kept, and logs its SQLSTATE; without a log nothing is written", () => {
    const logger = keptLogger();
    const contention = new ContentionError(Object.assign(new Error("serialization failure"), { code: "40001" }), 3, 12.4);
    const answer = problemAnswer(contention, "/v1/z", { logger, requestId: "req-2" });
    expect(answer.status).toBe(PROBLEM_CODES.contention.status);
    expect(answer.headers["retry-after"]).toMatch(/^\d+$/);
    expect(answer.keepable).toBe(false);
    expect(logger.lines.map((l) => [l.level, l.msg, l.fields["sqlstate"]])).toEqual([["warn", "contention", "40001"]]);
    const lines = logger.lines.length;
    expect(problemAnswer(contention, "/v1/z").status).toBe(answer.status);
    expect(logger.lines.length).toBe(lines);
  });

  it("writes the parser's own answers with the same members as every other problem", () => {
    const text = clientErrorAnswer("headers_too_large");
    const body = JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)) as Record<string, unknown>;
    expect(body).toEqual({ type: problemTypeUri("headers_too_large"), ...PROBLEM_CODES.headers_too_large, code: "headers_too_large" });
    expect(text).toContain(`content-type: ${PROBLEM_TYPE}\r\n`);
  });
});

describe("presentedSecret", () => {
  it("reads `authorization: Bearer` first, then `x-api-key`, and nothing from a malformed header", () => {
    expect(presentedSecret({ authorization: "Bearer abc" })).toBe("abc");
    expect(presentedSecret({ authorization: "bearer  abc  " })).toBe("abc");
    expect(presentedSecret({ authorization: "Bearer abc", "x-api-key": "def" })).toBe("abc");
    expect(presentedSecret({ "x-api-key": "def" })).toBe("def");
    expect(presentedSecret({ authorization: "Basic abc", "x-api-key": "def" })).toBeUndefined();
    expect(presentedSecret({ "x-api-key": "" })).toBeUndefined();
    expect(presentedSecret({})).toBeUndefined();
  });

  it("never throws and never answers a key with a space in it, whatever the headers", () => {
    fc.assert(
      fc.property(
        fc.option(fc.string({ maxLength: 80 }), { nil: undefined }),
        fc.option(fc.string({ maxLength: 80 }), { nil: undefined }),
        (authorization, apiKey) => {
          const secret = presentedSecret({
            ...(authorization === undefined ? {} : { authorization }),
            ...(apiKey === undefined ? {} : { "x-api-key": apiKey }),
          });
          if (authorization !== undefined) expect(secret === undefined || !/\s/.test(secret)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("requestLog", () => {
  const req = { socket: new Socket(), headers: {} } as unknown as IncomingMessage;

  it("writes one line with the same fields in the same order, at info, and at error for a 5xx", () => {
    const logger = keptLogger();
    const log = requestLog(logger, new Set());
    log(req, "req-3", "POST", "/v1/authorize", 200, 0.0123456, "key_1");
    log(req, "req-4", "GET", "/v1/grants", 503, 1, undefined);
    expect(logger.lines.map((l) => [l.level, l.msg, Object.keys(l.fields)])).toEqual([
      ["info", "request", ["request_id", "method", "path", "status", "duration_ms", "key_id", "client"]],
      ["error", "request", ["request_id", "method", "path", "status", "duration_ms", "key_id", "client"]],
    ]);
    expect(logger.lines[0]!.fields).toMatchObject({
      request_id: "req-3",
      method: "POST",
      path: "/v1/authorize",
      status: 200,
      duration_ms: 12.35,
      key_id: "key_1",
    });
  });

  it("writes nothing below the logger's level, and still the 5xx at `error`", () => {
    const logger = keptLogger("error");
    const log = requestLog(logger, new Set());
    log(req, "req-5", "POST", "/v1/authorize", 200, 0.001, undefined);
    log(req, "req-6", "POST", "/v1/authorize", 500, 0.001, undefined);
    expect(logger.lines.map((l) => l.fields["request_id"])).toEqual(["req-6"]);
  });
});
