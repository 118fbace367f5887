// Answers the HTTP parser gives before any handler runs (a malformed request line or header,
// headers over Node's size limit, a request that did not arrive in time): an RFC 9457 problem with
// the headers every answer carries (hot-path.ts, setSafetyHeaders), written on the socket, which is
// then closed. Node's own answers for these carry no body and neither header (decision 0608).

import type { Duplex } from "node:stream";
import type { ProblemCode } from "@agent-authority/api";
import { PROBLEM_TYPE, problemHead } from "./problem.js";

/** The reason phrase of each status this module answers. */
const REASON: Readonly<Record<number, string>> = Object.freeze({
  400: "Bad Request",
  408: "Request Timeout",
  431: "Request Header Fields Too Large",
});

/** The problem code of a parser error, by Node's error code. */
export function clientErrorCode(errorCode: string | undefined): "malformed_request" | "request_timeout" | "headers_too_large" {
  if (errorCode === "ERR_HTTP_REQUEST_TIMEOUT") return "request_timeout";
  if (errorCode === "HPE_HEADER_OVERFLOW") return "headers_too_large";
  return "malformed_request";
}

/** The whole answer, status line to body, for a problem code of this module. */
export function clientErrorAnswer(code: ProblemCode): string {
  const head = problemHead(code);
  const status = head.status;
  const body = JSON.stringify(head);
  return [
    `HTTP/1.1 ${status} ${REASON[status] ?? "Error"}`,
    `content-type: ${PROBLEM_TYPE}`,
    `content-length: ${Buffer.byteLength(body)}`,
    "cache-control: no-store",
    "x-content-type-options: nosniff",
    "connection: close",
    "",
    body,
  ].join("\r\n");
}

/** Whether an answer has begun on the socket already; writing another would corrupt it. */
function answerBegun(socket: Duplex): boolean {
  // Node keeps the response in flight on the socket; its own handler makes the same check.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  return inFlight?.headersSent === true;
}

/**
 * The server's `clientError` listener: answers the problem when the client can still read one,
 * then closes the connection; a connection reset by the client is only closed.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === "ECONNRESET" || !socket.writable || answerBegun(socket)) {
    socket.destroy();
    return;
  }
  socket.end(clientErrorAnswer(clientErrorCode(error.code)), () => socket.destroy());
}
