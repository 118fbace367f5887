// Public face of the server package: what the CLI embeds (serve, migrate, keys) and tests use.
export { loadConfig, ConfigError, TRANSPORT_LIMITS, type ServerConfig } from "./config.js";
export { startServer, SERVER_VERSION, type AuthorityServer, type StartOptions, type RequestListener } from "./server.js";
export { createApp, type AppOptions } from "./http/app.js";
export { clientAddress, FORWARDED_FOR_LIMITS } from "./http/client-address.js";
export {
  openStore,
  openExistingStore,
  DatabaseNotFound,
  EngineNeedsPostgresUrl,
  sqliteFile,
  isPostgresUrl,
  type OpenStoreOptions,
} from "./store/core/index.js";
export { SqlStore } from "./store/core/index.js";
export { DATABASE_ENGINES, ENGINE_PROFILES, SignalSequenceUnordered, type DatabaseEngine, type EngineProfile } from "./store/sql/index.js";
export { PostgresDriver, POSTGRES_LIMITS, RETRYABLE_SQLSTATES } from "./store/drivers/index.js";
export { SQLITE_LIMITS, SqliteDriver } from "./store/drivers/index.js";
export { ContentionError, DatabaseUnavailableError, isDatabaseUnavailable } from "./store/sql/index.js";
export { StoreRowError } from "./store/sql/index.js";
export { SealedRecordError } from "./services/seal/index.js";
export { GROUP_COMMIT_LIMITS, GroupCommitFull } from "./store/drivers/index.js";
export { databaseHosts, DatabaseUrlError, HOST_LIMITS } from "./store/drivers/index.js";
export { MIGRATIONS, LATEST_MIGRATION, type Migration } from "./store/core/index.js";
export type {
  Store,
  KeyRecord,
  AgentRecord,
  CertificateRecord,
  GrantRecord,
  GrantEventRecord,
  GrantUsage,
  Page,
  Revocation,
} from "./store/core/index.js";
export { keyIdentityFault } from "@agent-authority/api";
export {
  Signer,
  SIGNING_LIMITS,
  keyId,
  type SignatureField,
  type BatchSignatureField,
  type PublicSigningKey,
} from "./services/seal/index.js";
export { decisionAnswerText, decisionStatement } from "./services/decisions/index.js";
export { derivedKey, parseServerKey, serverKeyFromFile, ServerKeyError, SERVER_KEY_LIMITS } from "./server-key.js";
export { createKey, revokeKeyRecord, bootstrapAdminKey, callerForSecret, type NewKey } from "./services/keys/index.js";
export { Refusal } from "./services/common/index.js";
/** The former name of `Refusal`, kept for code that imported it. */
export { Refusal as ApiProblem } from "./services/common/index.js";
export { migrateDatabase } from "./store/core/index.js";
export { keyView } from "./services/common/index.js";
export { generateSecret, hashSecret } from "./secrets.js";
export { jsonLogger, type Logger, type LogLevel } from "./log.js";
export {
  verifyLedger,
  canonicalJson,
  canonicalMerge,
  CanonicalText,
  linkHash,
  GENESIS_HASH,
  type LedgerVerification,
  type LedgerBreak,
} from "./services/seal/index.js";
export type { DecisionStore, LedgerRow, ChargeRow, DecisionApprovalRow, IdempotencyRow } from "./store/decisions/index.js";
export {
  CarriedWindows,
  evaluateBreakers,
  evaluateBreakersAfterDecision,
  watchBreakers,
  type SealedDecision,
} from "./services/breakers/index.js";
export { sealRecord, type SealInput } from "./services/seal/index.js";
export {
  decisionReceipt,
  ledgerCheckpoint,
  ledgerConsistency,
  ledgerOrigin,
  logPending,
  startLedgerLogger,
  treeHead,
  LEDGER_LOG_LIMITS,
} from "./services/ledger/index.js";
export {
  CheckpointRefused,
  databaseKeys,
  verifyCheckpointAgainst,
  type CheckpointBreak,
  type CheckpointVerification,
} from "./services/ledger/index.js";
export type { BreakerStore, ContractRow, BreakerRow, TripRow, WatchedBreaker, WindowState } from "./store/breakers/index.js";
export { IDEMPOTENCY_LIMITS, answersExpiredUpTo } from "./services/idempotency/index.js";
export { pruneExpiredAnswers, startIdempotencyPruner, type IdempotencyPruner, type PruneResult } from "./services/idempotency/index.js";
export { HttpMetrics } from "./http/metrics.js";
export { serveUntilStopped, LAUNCHER_POLL_MS, type ServeOptions } from "./run.js";
export { revealFirstAdminKey, startupHint, startFailureLine, FIRST_ADMIN_KEY_FILE, type SecretOutlet } from "./first-start.js";
export { EVENT_LIMITS, EventFeed } from "./services/events/index.js";
export { WEBHOOK_DELIVERY_LIMITS, WebhookDispatcher, signMessage, retryDelayMs } from "./services/events/index.js";
