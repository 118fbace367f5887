// Families' tables: pushed family versions.

export { familiesMigrationSql, FAMILY_TABLES, FamilySql } from "./family-sql.js";
export type { FamilyStore, FamilyVersionRow } from "./family-sql.js";
