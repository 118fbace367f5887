// SQL plumbing: the driver interface, engine profiles, row readers, array literals, the decision cache and store observations.

export { CacheKind, DecisionCache } from "./decision-cache.js";
export { ContentionError, DatabaseUnavailableError, isDatabaseUnavailable, settledInOrder } from "./driver.js";
export type { Batchable, BatchStep, Dialect, Row, SqlDriver, SqlValue } from "./driver.js";
export {
  checkSignalSequence,
  DATABASE_ENGINES,
  ENGINE_PROFILES,
  isDatabaseEngine,
  POSTGRESQL_PROFILE,
  prepareLockTable,
  SignalSequenceUnordered,
  takeNamedLock,
} from "./engine.js";
export type { DatabaseEngine, EngineProfile } from "./engine.js";
export { BATCH_SIZE_BUCKETS, DATABASE_ERROR_KINDS, observeFailure, StoreObservations } from "./observations.js";
export type { ObservationDelta } from "./observations.js";
export { arrayLiteral } from "./pg-arrays.js";
export { ColumnReader, insertSql, parameter, parameters, StoreRowError } from "./rows.js";
