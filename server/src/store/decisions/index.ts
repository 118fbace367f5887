// Decisions' tables: the sealed ledger, holds, charges, idempotency answers and approvals.

export {
  approvalFromRow,
  CHARGE_COLUMNS,
  DECISION_PATH_SQL,
  DecisionSql,
  GRANT_TOTALS_SQL,
  IDEMPOTENCY_COLUMNS,
  idempotencyFromRow,
  keepCharge,
  keepLedgerHead,
  keepUses,
  LEDGER_COLUMNS,
  ledgerFromRow,
  OPEN_HOLD_AT,
} from "./decision-sql.js";
export type { ChargeRow, DecisionApprovalRow, DecisionStore, IdempotencyRow, LedgerRow } from "./decision-sql.js";
