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
} from "./store/open.js";
export { SqlStore } from "./store/sql-store.js";
export { DATABASE_ENGINES, ENGINE_PROFILES, SignalSequenceUnordered, type DatabaseEngine, type EngineProfile } from "./store/engine.js";
export { PostgresDriver, POSTGRES_LIMITS, RETRYABLE_SQLSTATES } from "./store/postgres-driver.js";
export { SqliteDriver } from "./store/sqlite-driver.js";
export { ContentionError, DatabaseUnavailableError, isDatabaseUnavailable } from "./store/driver.js";
export { StoreRowError } from "./store/rows.js";
export { SealedRecordError } from "./services/sealed-records.js";
export { GROUP_COMMIT_LIMITS, GroupCommitFull } from "./store/group-commit.js";
export { databaseHosts, DatabaseUrlError, HOST_LIMITS } from "./store/postgres-hosts.js";
export { MIGRATIONS, LATEST_MIGRATION, type Migration } from "./store/migrations.js";
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
} from "./store/store.js";
export { keyIdentityFault } from "@agent-authority/api";
export {
  Signer,
  SIGNING_LIMITS,
  keyId,
  signatureJson,
  type SignatureField,
  type BatchSignatureField,
  type PublicSigningKey,
} from "./services/signing.js";
export { decisionAnswerText, decisionStatement } from "./services/decision-text.js";
export { derivedKey, parseServerKey, serverKeyFromFile, ServerKeyError, SERVER_KEY_LIMITS } from "./server-key.js";
export { createKey, revokeKeyRecord, bootstrapAdminKey, callerForSecret, type NewKey } from "./services/keys.js";
export { Refusal } from "./services/refusal.js";
/** The former name of `Refusal`, kept for code that imported it. */
export { Refusal as ApiProblem } from "./services/refusal.js";
export { migrateDatabase } from "./store/open.js";
export { keyView } from "./services/views.js";
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
} from "./services/ledger.js";
export type { DecisionStore, LedgerRow, ChargeRow, DecisionApprovalRow, IdempotencyRow } from "./store/decision-sql.js";
export { evaluateBreakersAfterDecision, watchBreakers, type SealedDecision } from "./services/breakers.js";
export { sealRecord, type SealInput } from "./services/ledger.js";
export {
  decisionReceipt,
  ledgerCheckpoint,
  ledgerConsistency,
  ledgerOrigin,
  logPending,
  startLedgerLogger,
  treeHead,
  LEDGER_LOG_LIMITS,
} from "./services/checkpoints.js";
export {
  CheckpointRefused,
  databaseKeys,
  verifyCheckpointAgainst,
  type CheckpointBreak,
  type CheckpointVerification,
} from "./services/checkpoint-witness.js";
export type { BreakerStore, ContractRow, BreakerRow, TripRow, WatchedBreaker, WindowState } from "./store/breaker-sql.js";
export { IDEMPOTENCY_LIMITS, answersExpiredUpTo } from "./services/idempotency.js";
export { pruneExpiredAnswers, startIdempotencyPruner, type IdempotencyPruner, type PruneResult } from "./services/idempotency-pruner.js";
export { HttpMetrics } from "./http/metrics.js";
export { serveUntilStopped, LAUNCHER_POLL_MS, type ServeOptions } from "./run.js";
export { revealFirstAdminKey, startupHint, startFailureLine, FIRST_ADMIN_KEY_FILE, type SecretOutlet } from "./first-start.js";
export { EVENT_LIMITS, EventFeed } from "./services/event-feed.js";
export { WEBHOOK_DELIVERY_LIMITS, WebhookDispatcher, signMessage, retryDelayMs } from "./services/webhook-dispatcher.js";
