// Drivers: SQLite (with its checkpoint thread) and PostgreSQL (with its host ring), and the group commit both run.

export { afterFailure, GROUP_COMMIT_LIMITS, GroupCommit, GroupCommitFull } from "./group-commit.js";
export type { BatchOpener, RetryPolicy } from "./group-commit.js";
export { POSTGRES_LIMITS, PostgresDriver, RETRYABLE_SQLSTATES } from "./postgres-driver.js";
export { databaseHosts, DatabaseUrlError, HOST_LIMITS } from "./postgres-hosts.js";
export {
  NEW_DATABASE_PAGE_SIZE,
  SqliteConnection,
  SqliteDriver,
  SQLITE_LIMITS,
  THREAD_CHECKPOINT_STEP,
  THREADED_WRITER_CHECKPOINT_FRAMES,
  WRITER_CHECKPOINT_FRAMES,
} from "./sqlite-driver.js";
