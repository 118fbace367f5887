// The store: the one interface services see, its SQL implementation over every room's tables, batch reads and writes, migrations, and opening a store.

export { BatchWriteConflict } from "./decision-batch-sql.js";
export { LATEST_MIGRATION, MIGRATIONS } from "./migrations.js";
export type { Migration } from "./migrations.js";
export {
  DatabaseNotFound,
  EngineNeedsPostgresUrl,
  isPostgresUrl,
  migrateDatabase,
  openExistingStore,
  openStore,
  sqliteFile,
} from "./open.js";
export type { OpenStoreOptions } from "./open.js";
export { SqlStore } from "./sql-store.js";
export type {
  AgentRecord,
  ApprovalUse,
  BatchReadRequest,
  BatchReads,
  BatchWrites,
  CertificateRecord,
  ClaimedKey,
  GrantEventRecord,
  GrantFilter,
  GrantRecord,
  GrantUsage,
  HeldTree,
  KeyRecord,
  Page,
  PresentedGrant,
  Revocation,
  SignalRow,
  Store,
  StoreBatchable,
  StoreBatchStep,
} from "./store.js";
