// The lean path of POST /access/v1/evaluation: a plain node:http handler in front of Express, as
// POST /v1/authorize has (hot-path.ts). It answers with the same function as the Express route
// (`evaluationOf`), so both keep one contract: the 401, 400, 413, 415 and 422 problems, the request
// id echoed, the decision in the AuthZEN shape (decision 1703).

import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../log.js";
import type { ServiceContext } from "../services/common/index.js";
import { AUTHZEN_PATHS, evaluationOf, sentRequestId } from "./authzen.js";
import { readBody, setSafetyHeaders } from "./hot-path.js";
import type { HttpMetrics } from "./metrics.js";
import { problemAnswer } from "./problem.js";
import { requestLog } from "./request-log.js";

const PATH = AUTHZEN_PATHS.evaluation;

/** Whether the lean path answers this request; every other request goes on to Express. */
export function isEvaluationRequest(req: IncomingMessage): boolean {
  if (req.method !== "POST" || req.url === undefined) return false;
  const q = req.url.indexOf("?");
  return (q === -1 ? req.url : req.url.slice(0, q)) === PATH;
}

/** The answer's status, type and text: the decision, or the problem of a request refused whole. */
async function answerOf(
  ctx: ServiceContext,
  logger: Logger,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<{ status: number; contentType: string; text: string }> {
  try {
    const requestId = sentRequestId(req.headers);
    res.setHeader("x-request-id", requestId ?? randomUUID());
    const raw = await readBody(req);
    const decision = await evaluationOf(ctx, req.headers, raw.length === 0 ? undefined : raw, requestId);
    return { status: 200, contentType: "application/json; charset=utf-8", text: JSON.stringify(decision) };
  } catch (error) {
    if (!res.hasHeader("x-request-id")) res.setHeader("x-request-id", randomUUID());
    const problem = problemAnswer(error, PATH, { logger, requestId: res.getHeader("x-request-id") });
    for (const [name, value] of Object.entries(problem.headers)) res.setHeader(name, value);
    return { status: problem.status, contentType: problem.contentType, text: problem.text };
  }
}

/** Answers one evaluation; never throws (every failure becomes a problem answer). */
async function handleEvaluation(ctx: ServiceContext, logger: Logger, req: IncomingMessage, res: ServerResponse): Promise<void> {
  setSafetyHeaders(res);
  const { status, contentType, text } = await answerOf(ctx, logger, req, res);
  if (res.headersSent) return;
  res.statusCode = status;
  res.setHeader("content-type", contentType);
  res.setHeader("content-length", Buffer.byteLength(text));
  res.end(text);
}

/** The lean path as the server's listener calls it: answers, then counts and logs the request as the Express route would. */
export function evaluationServer(
  ctx: ServiceContext,
  logger: Logger,
  metrics: HttpMetrics,
  trusted: ReadonlySet<string> = new Set(),
): (req: IncomingMessage, res: ServerResponse) => void {
  const record = metrics.recorder("POST", PATH);
  const log = requestLog(logger, trusted);
  return (req, res) => {
    const started = performance.now();
    void handleEvaluation(ctx, logger, req, res).then(() => {
      const seconds = (performance.now() - started) / 1000;
      record(res.statusCode, seconds);
      log(req, res.getHeader("x-request-id"), "POST", PATH, res.statusCode, seconds, undefined);
    });
  };
}
