// The Idempotency-Key middleware of the Express routes: replay a stored answer, refuse a key reused
// with another request, and store the first answer before it is sent. Authorize does the same
// inside its decision's transaction (services/authorize.ts), where a key and a decision commit together.

import type { NextFunction, Request, Response } from "express";
import type { ServiceContext } from "../services/context.js";
import { IDEMPOTENCY_HEADER, idempotencyClaim, reusedKey } from "../services/idempotency.js";
import type { Logger } from "../log.js";

export function idempotencyMiddleware(ctx: ServiceContext, logger: Logger) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const caller = (res.locals as { caller?: { keyId: string } }).caller;
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const path = req.originalUrl.split("?")[0]!;
    const claim = caller === undefined ? undefined : idempotencyClaim(req.headers[IDEMPOTENCY_HEADER], caller.keyId, req.method, path, raw);
    if (claim === undefined) return next();
    const ledger = ctx.store.decisionPath();
    const stored = await ledger.getIdempotency(claim.callerKeyId, claim.key);
    if (stored !== undefined) {
      if (stored.request_hash !== claim.requestHash) throw reusedKey(claim);
      const cut = stored.response.indexOf("\n");
      res.status(stored.status).setHeader("content-type", stored.response.slice(0, cut));
      res.setHeader("idempotent-replayed", "true");
      res.end(stored.response.slice(cut + 1));
      return;
    }
    // Every answer below 500 is kept: a retry of a refused request is refused the same way, and a
    // 5xx is not kept, so a retry after a failure runs again.
    const send = res.send.bind(res);
    res.send = ((payload: unknown) => {
      if (res.statusCode >= 500 || typeof payload !== "string") return send(payload);
      const declared = String(res.getHeader("content-type") ?? "application/json");
      // Express adds the charset of a string body as it sends it; the stored copy says the same.
      const contentType = /charset=/i.test(declared) ? declared : `${declared}; charset=utf-8`;
      void ledger.putIdempotency({
        caller_key_id: claim.callerKeyId, idempotency_key: claim.key, method: claim.method, path: claim.path,
        request_hash: claim.requestHash, status: res.statusCode, response: `${contentType}\n${payload}`, created_at: ctx.now(),
      }).catch((error: unknown) => logger.log("error", "idempotency key not stored", { error: error instanceof Error ? error.message : String(error) }))
        .finally(() => send(payload));
      return res;
    }) as Response["send"];
    next();
  };
}
