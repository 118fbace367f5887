// Common: what every service is given and answers with: the service context and caller, refusals, idempotent answers' shapes, page cursors and the v1 views of records.

export { JSON_TYPE } from "./answers.js";
export type { IdempotencyClaim, PreparedAnswer, RequestClaim } from "./answers.js";
export { confinedToAgent } from "./context.js";
export type { Caller, DecidedAnswer, FaultHooks, ServiceContext, ServiceObserver } from "./context.js";
export { decodeCursor, encodeCursor } from "./cursor.js";
export { Refusal, refusalFields, refusalOf } from "./refusal.js";
export type { RefusalFields } from "./refusal.js";
export { agentView, certificateView, grantStatus, grantView, iso, keyView } from "./views.js";
