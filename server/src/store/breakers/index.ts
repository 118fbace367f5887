// Breakers and contracts' tables: contracts, breakers, signals, windows and trips.

export { BREAKER_TABLES, breakersMigrationSql, BreakerSql, SIGNAL, SIGNAL_COUNT } from "./breaker-sql.js";
export type {
  BreakerRow,
  BreakerStore,
  ContractRow,
  SignalCounts,
  SignalKey,
  TripRow,
  WatchedBreaker,
  WindowState,
} from "./breaker-sql.js";
