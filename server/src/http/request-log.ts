// The one `request` log line of every request, written the same way by Express and the authorize
// hot path: at `info`, `error` for a 5xx, and its fields built only when the logger's level lets
// the line through.

import type { IncomingMessage } from "node:http";
import type { Logger } from "../log.js";
import { clientAddress } from "./client-address.js";

/** Writes one request's line: `seconds` is its duration, `keyId` the key that asked, once known. */
export type RequestLog = (
  req: IncomingMessage,
  requestId: unknown,
  method: string,
  path: string,
  status: number,
  seconds: number,
  keyId: string | undefined,
) => void;

/** The request log of a server: `trusted` are the reverse proxies whose X-Forwarded-For names the client. */
export function requestLog(logger: Logger, trusted: ReadonlySet<string>): RequestLog {
  const infoOn = logger.enabled?.("info") ?? true;
  const errorOn = logger.enabled?.("error") ?? true;
  return (req, requestId, method, path, status, seconds, keyId) => {
    if (!(status >= 500 ? errorOn : infoOn)) return;
    logger.log(status >= 500 ? "error" : "info", "request", {
      request_id: requestId,
      method,
      path,
      status,
      duration_ms: Math.round(seconds * 100_000) / 100,
      key_id: keyId,
      client: clientAddress(req, trusted),
    });
  };
}
