// Rows in and out of SQL: the one INSERT statement and the one record-to-parameters rule of every
// table, and the checked column reads that each table's row decoder is made of (decision 0350).

import type { Row, SqlValue } from "./driver.js";

/** `INSERT INTO table (a, b) VALUES (?, ?)`: the columns in the order `parameters` gives their values. */
export function insertSql(table: string, columns: readonly string[]): string {
  return `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`;
}

/**
 * A record's values for `columns`, in their order, by one rule for both databases:
 *
 * - `undefined` and `null` are NULL: an absent optional field and a null one are stored alike.
 * - A boolean is 1 or 0. SQLite has no boolean type and better-sqlite3 refuses to bind one;
 *   PostgreSQL has one, but node-postgres sends `true` as the text `true`, which the SMALLINT and
 *   INTEGER columns that hold flags refuse. Every flag column is an integer on both, read back
 *   with `ColumnReader.flag`.
 * - An object or an array is its JSON text (`JSON.stringify`), for a TEXT column read back with
 *   `ColumnReader.json`.
 * - A string is bound as it is (PostgreSQL refuses one holding NUL, U+0000). A number only when
 *   finite, since SQLite would store NaN as NULL and PostgreSQL refuses it in an integer column;
 *   -0 is bound as 0 on both.
 *
 * Anything else (a bigint, a function, a symbol, NaN) is a programmer's error and throws.
 */
export function parameters<R extends object, C extends keyof R & string>(record: R, columns: readonly C[]): SqlValue[] {
  return columns.map((column) => parameter(record[column], column));
}

/** One value by the rule of `parameters`. */
export function parameter(value: unknown, column: string): SqlValue {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") return value;
  if (typeof value === "number") {
    // -0 is 0: node-postgres would send String(-0), which is "0", and SQLite keeps no sign of zero.
    if (Number.isFinite(value)) return value === 0 ? 0 : value;
    throw new TypeError(`the value of column \`${column}\` is not a finite number: ${String(value)}`);
  }
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "object") return JSON.stringify(value);
  throw new TypeError(`the value of column \`${column}\` cannot be stored: a ${typeof value}`);
}

/** At most this many characters of a wrong value are quoted in a StoreRowError. */
const QUOTED_CHARS_MAX = 60;

function quoted(value: unknown): string {
  if (value === undefined) return "no such column";
  if (value === null) return "NULL";
  const text = typeof value === "string" ? JSON.stringify(value) : `${typeof value} ${String(value)}`;
  return `\`${text.length > QUOTED_CHARS_MAX ? `${text.slice(0, QUOTED_CHARS_MAX)}…` : text}\``;
}

/**
 * A row the database returned is not what the schema says: a column missing, NULL where the
 * schema forbids it, of another type (SQLite keeps text in an integer column), a word outside
 * its set, or JSON that does not parse. Someone edited the database by hand, or it is damaged;
 * the store refuses to read the row rather than hand on a wrong value.
 */
export class StoreRowError extends Error {
  readonly table: string;
  readonly column: string;

  constructor(table: string, column: string, expected: string, value: unknown, cause?: unknown) {
    super(
      `the database returned a row of \`${table}\` whose column \`${column}\` is not ${expected}: ${quoted(value)}`,
      cause === undefined ? undefined : { cause },
    );
    this.name = "StoreRowError";
    this.table = table;
    this.column = column;
  }
}

/**
 * The checked reads of one table's columns. Plain type checks, no copies: a read that finds what
 * the schema says costs a `typeof` or two. Both drivers answer TEXT as a string, integers and
 * reals as numbers (int8 included, postgres-driver.ts) and NULL as null.
 */
export class ColumnReader {
  readonly table: string;

  constructor(table: string) {
    this.table = table;
  }

  text(row: Row, column: string): string {
    const value = row[column];
    if (typeof value === "string") return value;
    throw new StoreRowError(this.table, column, "text", value);
  }

  textOrNull(row: Row, column: string): string | null {
    const value = row[column];
    if (value === null) return null;
    if (typeof value === "string") return value;
    throw new StoreRowError(this.table, column, "text or NULL", value);
  }

  /** An integer column: amounts, counts and times are safe integers (decision 0001). */
  integer(row: Row, column: string): number {
    const value = row[column];
    if (typeof value === "number" && Number.isSafeInteger(value)) return value;
    throw new StoreRowError(this.table, column, "a safe integer", value);
  }

  integerOrNull(row: Row, column: string): number | null {
    const value = row[column];
    if (value === null) return null;
    if (typeof value === "number" && Number.isSafeInteger(value)) return value;
    throw new StoreRowError(this.table, column, "a safe integer or NULL", value);
  }

  real(row: Row, column: string): number {
    const value = row[column];
    if (typeof value === "number" && Number.isFinite(value)) return value;
    throw new StoreRowError(this.table, column, "a finite number", value);
  }

  realOrNull(row: Row, column: string): number | null {
    const value = row[column];
    if (value === null) return null;
    if (typeof value === "number" && Number.isFinite(value)) return value;
    throw new StoreRowError(this.table, column, "a finite number or NULL", value);
  }

  /** A flag stored as 1 or 0 (`parameters`). */
  flag(row: Row, column: string): boolean {
    const value = row[column];
    if (value === 1) return true;
    if (value === 0) return false;
    throw new StoreRowError(this.table, column, "a flag (0 or 1)", value);
  }

  /** A word of a fixed set. */
  oneOf<T extends string>(row: Row, column: string, words: readonly T[]): T {
    const value = row[column];
    const word = words.find((w) => w === value);
    if (word !== undefined) return word;
    throw new StoreRowError(this.table, column, `one of ${words.join(", ")}`, value);
  }

  /** A TEXT column of JSON: the parsed value, of no checked shape yet. */
  json(row: Row, column: string): unknown {
    const text = this.text(row, column);
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new StoreRowError(this.table, column, "JSON", text, error);
    }
  }

  /** A TEXT column of a JSON object. */
  jsonObject(row: Row, column: string): Record<string, unknown> {
    const value = this.json(row, column);
    if (isObject(value)) return value;
    throw new StoreRowError(this.table, column, "a JSON object", row[column]);
  }

  /** A TEXT column of a JSON array of strings. */
  jsonStrings(row: Row, column: string): string[] {
    const value = this.json(row, column);
    if (Array.isArray(value) && value.every((item) => typeof item === "string")) return value;
    throw new StoreRowError(this.table, column, "a JSON array of strings", row[column]);
  }

  /** A TEXT column of a JSON array of words of a fixed set. */
  jsonWords<T extends string>(row: Row, column: string, words: readonly T[]): T[] {
    const value = this.json(row, column);
    const out: T[] = [];
    for (const item of Array.isArray(value) ? value : [undefined]) {
      const word = words.find((w) => w === item);
      if (word === undefined) throw new StoreRowError(this.table, column, `a JSON array of ${words.join(", ")}`, row[column]);
      out.push(word);
    }
    return out;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
