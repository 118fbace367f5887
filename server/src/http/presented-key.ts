// The key a request presents, read the one way every route and the authorize hot path read it.

import type { IncomingHttpHeaders } from "node:http";

/** The key, from `authorization: Bearer …` or `x-api-key`, both accepted everywhere; undefined when none is usable. */
export function presentedSecret(headers: IncomingHttpHeaders): string | undefined {
  const header = headers.authorization;
  if (header !== undefined) return /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
  const apiKey = headers["x-api-key"];
  return typeof apiKey === "string" && apiKey.length > 0 ? apiKey : undefined;
}
