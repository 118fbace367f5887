// Keys: API keys, their callers and roles, and the first administrator key.

export {
  BEARER_CHALLENGE,
  bootstrapAdminKey,
  callerForSecret,
  callerOfKey,
  createKey,
  createKeyFromRequest,
  listKeys,
  missingRole,
  revokeKey,
  revokeKeyRecord,
  secretShownOnce,
  unauthenticated,
} from "./keys.js";
export type { NewKey } from "./keys.js";
