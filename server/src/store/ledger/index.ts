// The ledger's proofs' tables: the Merkle log of sealed records and the server's signing keys.

export { ledgerCursorsMigrationSql, ledgerLogMigrationSql, LedgerLogSql, partKey } from "./ledger-log-sql.js";
export type { LedgerLogStore, LoggedLeaf, PendingRecord, PendingScope, TreeCursor } from "./ledger-log-sql.js";
export { SIGNING_TABLES, SigningKeySql, signingMigrationSql } from "./signing-sql.js";
export type { SigningKeyRow, SigningKeyStore } from "./signing-sql.js";
