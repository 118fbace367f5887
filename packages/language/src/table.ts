// A policy's logical tree (`&&`, `||`, `!`) as one table of tests read by one loop (decision 0151).
import type { Span } from "@agent-authority/grammar";
import { type Expr, mentionsApprover } from "./ast.js";
import type { PolicyEnvironment } from "./environment.js";
import { describe, type Evaluated, fail, Failure, type Meter, NEVER_CHARGED, type Value } from "./values.js";

/** The environment as a table reads it; `approver` may be absent (read as null), as in compile.ts. */
type TableEnv = Omit<PolicyEnvironment, "approver"> & { readonly approver?: string | null };

/** A compiled node the table calls for an operand that is not one of its own tests (compile.ts `Evaluator`). */
export type TableCall = (env: TableEnv, meter: Meter) => Evaluated;

/** The names a test reads, by number: the table switches on it, so each read sees one property. */
const AMOUNT = 0;
const CURRENCY = 1;
const TOOL = 2;
const AGENT = 3;
const PRINCIPAL = 4;
const AUDIENCE = 5;
const USES = 6;
const SPENT = 7;
const HOUR = 8;
const WEEKDAY = 9;
const APPROVER = 10;
const NAMES: ReadonlyMap<string, number> = new Map([
  ["amount_minor", AMOUNT],
  ["currency", CURRENCY],
  ["tool", TOOL],
  ["agent", AGENT],
  ["principal", PRINCIPAL],
  ["audience", AUDIENCE],
  ["uses", USES],
  ["spent_minor", SPENT],
  ["hour_utc", HOUR],
  ["weekday_utc", WEEKDAY],
  ["approver", APPROVER],
]);

/** Whether a test may read `name` (every name of the environment but `args`). */
export function tableReads(name: string): boolean {
  return NAMES.has(name);
}

/** The comparisons a row makes, by number; a row numbered CALL calls a compiled operand instead. */
const CALL = 0;
const LT = 1;
const LE = 2;
const GT = 3;
const GE = 4;
const EQ = 5;
const NE = 6;
const IN = 7;
const STARTS = 8;
const ENDS = 9;
const OPS: ReadonlyMap<TableOp, number> = new Map<TableOp, number>([
  ["<", LT],
  ["<=", LE],
  [">", GT],
  [">=", GE],
  ["==", EQ],
  ["!=", NE],
  ["in", IN],
  ["startsWith", STARTS],
  ["endsWith", ENDS],
]);

export type TableOp = "<" | "<=" | ">" | ">=" | "==" | "!=" | "in" | "startsWith" | "endsWith";

/** A comparison of a name (on the left) with a literal, that can never fail nor charge: one row of a table. */
export interface TableTest {
  readonly op: TableOp;
  readonly name: string;
  readonly literal: Value;
}

/** Where the table's compiler finds its rows: the tests, and every other operand compiled. */
export interface TableSource {
  /** `e` as a test, when it is a comparison of a name with a literal that the closures decide without failing. */
  test(e: Expr): TableTest | undefined;
  /** `e` compiled on its own, saying whether it can fail. */
  call(e: Expr): { readonly fn: TableCall; readonly canFail: boolean };
  /** Whether `e`'s static type is `dyn` (an operand of `&&`, `||` or `!` that may not be a condition). */
  dynamic(e: Expr): boolean;
}

/** The operator that receives a row's value: a value that is not a condition is its type error. */
interface Receiver {
  readonly message: string;
  readonly span: Span;
}

/** A row's target past the last test: the table's value. */
const TRUE_EXIT = -1;
const FALSE_EXIT = -2;

/**
 * The table: row `r` computes a truth value, and goes on at another row or an exit. Its numbers
 * are `code[4r..4r+3]`: the test, the name it reads, where a true and where a false value lead
 * (4 × the row, or an exit). Rows are in evaluation order, the first at 0; one typed array and
 * two arrays of one element type each, so the loop's reads stay monomorphic whatever policy it runs.
 */
export class LogicTable {
  constructor(
    readonly code: Int32Array,
    readonly literals: readonly Value[],
    readonly calls: readonly (TableCall | null)[],
    /** null: the row is the whole policy, and its value, condition or not, is the table's. */
    readonly receivers: readonly (Receiver | null)[],
    /** What `approver` reads as when fixed (compile.ts `compileNonNullApprover`), else undefined. */
    readonly approver: string | undefined,
    /** Whether a called row may read `approver` (only a test's reading is seen by runBothApprovers). */
    readonly approverInCalls: boolean,
  ) {}
}

/**
 * Compiles `root` into a table. `&&` and `||` stop as soon as their value is known and `!` swaps
 * its operand's targets, so the rows run in the closures' order, and a failure stops the table as
 * it stops every closure above it. The table can fail exactly where the closures could: a call
 * that can fail, or a `dyn` operand of a logical operator (INVARIANT (charging-can-fail)).
 */
export function compileTable(
  root: Expr,
  source: TableSource,
  approver?: string,
): { readonly table: LogicTable; readonly canFail: boolean } {
  const rows: Row[] = [];
  let canFail = false;
  let approverInCalls = false;
  // Built from the last row back: each operand is compiled knowing where its value leads.
  const emit = (e: Expr, onTrue: number, onFalse: number, receiver: Receiver | null): number => {
    if (receiver !== null && source.dynamic(e)) canFail = true;
    if (e.kind === "binary" && (e.op === "&&" || e.op === "||")) {
      const to: Receiver = { message: `\`${e.op}\` takes conditions`, span: e.span };
      const right = emit(e.right, onTrue, onFalse, to);
      return e.op === "&&" ? emit(e.left, right, onFalse, to) : emit(e.left, onTrue, right, to);
    }
    if (e.kind === "unary" && e.op === "!") return emit(e.operand, onFalse, onTrue, { message: "`!` takes a condition", span: e.span });
    const test = source.test(e);
    if (test !== undefined) return rows.push(testRow(test, receiver, onTrue, onFalse)) - 1;
    const call = source.call(e);
    if (call.canFail) canFail = true;
    if (mentionsApprover(e)) approverInCalls = true;
    return rows.push({ test: CALL, field: 0, literal: null, call: call.fn, receiver, onTrue, onFalse }) - 1;
  };
  // The leftmost operand is emitted last: it is the first row.
  if (emit(root, TRUE_EXIT, FALSE_EXIT, null) !== rows.length - 1) throw new Error("a table starts at its leftmost operand");
  return { table: tableOf(rows, approver, approverInCalls), canFail };
}

interface Row {
  readonly test: number;
  readonly field: number;
  readonly literal: Value;
  readonly call: TableCall | null;
  readonly receiver: Receiver | null;
  readonly onTrue: number;
  readonly onFalse: number;
}

function testRow(test: TableTest, receiver: Receiver | null, onTrue: number, onFalse: number): Row {
  const op = OPS.get(test.op);
  const field = NAMES.get(test.name);
  if (op === undefined || field === undefined) throw new RangeError(`no test reads \`${test.name}\` by \`${test.op}\``);
  return { test: op, field, literal: test.literal, call: null, receiver, onTrue, onFalse };
}

/** A table of one row: `fn`'s value, condition or not, is the table's. */
export function oneCall(fn: TableCall): LogicTable {
  return tableOf(
    [{ test: CALL, field: 0, literal: null, call: fn, receiver: null, onTrue: TRUE_EXIT, onFalse: FALSE_EXIT }],
    undefined,
    true,
  );
}

/** The rows, emitted last first, numbered in evaluation order. */
function tableOf(rows: readonly Row[], approver: string | undefined, approverInCalls: boolean): LogicTable {
  const last = rows.length - 1;
  const at = (target: number): number => (target < 0 ? target : 4 * (last - target));
  const code = new Int32Array(4 * rows.length);
  const ordered = rows.toReversed();
  for (const [r, row] of ordered.entries()) code.set([row.test, row.field, at(row.onTrue), at(row.onFalse)], 4 * r);
  return new LogicTable(
    code,
    ordered.map((row) => row.literal),
    ordered.map((row) => row.call),
    ordered.map((row) => row.receiver),
    approver,
    approverInCalls,
  );
}

/** The table's value: true or false, a Failure, or (for a table of one row that is not a condition) that row's value. */
export function runTable(table: LogicTable, env: TableEnv, meter: Meter): Evaluated {
  const code = table.code;
  let at = 0;
  for (;;) {
    const test = code[at]!;
    let v: Evaluated;
    if (test === CALL) {
      v = table.calls[at >> 2]!(env, meter);
      if (typeof v !== "boolean") return notCondition(table.receivers[at >> 2]!, v);
    } else {
      v = compare(test, read(table, code[at + 1]!, env, meter), table.literals[at >> 2]!);
    }
    at = v ? code[at + 2]! : code[at + 3]!;
    if (at < 0) return at === TRUE_EXIT;
  }
}

/** What `approver` reads as when it is some approver: only that it is not null is ever read. */
export const SOME_APPROVER = "\ue000";

/**
 * Partial evaluation of a table that cannot fail and reads `approver` only in its tests (not
 * `approverInCalls`), of a policy that compares `approver` with `null` alone, by one walk. The rows
 * before the first test of `approver` have the same values whoever approves, so the walk goes on
 * from that test once with `approver` SOME_APPROVER and, only when that ends true, again with it
 * null: the two values policy.ts `decideSafe` reads (false with an approver denies; true with and
 * without allows; true only with one gates, for every approver). A walk that never tests
 * `approver` has one value for all. Nothing is charged: a table that cannot fail charges nothing.
 */
export function runBothApprovers(table: LogicTable, env: TableEnv): "allow" | "deny" | "gated" {
  const code = table.code;
  let at = 0;
  let fork = -1;
  let approver: string | null = SOME_APPROVER;
  for (;;) {
    const test = code[at]!;
    const field = code[at + 1]!;
    let v: Evaluated;
    if (test === CALL) v = table.calls[at >> 2]!(env, NEVER_CHARGED);
    else if (field !== APPROVER) v = compare(test, read(table, field, env, NEVER_CHARGED), table.literals[at >> 2]!);
    else {
      if (fork < 0) fork = at;
      v = compare(test, approver, table.literals[at >> 2]!);
    }
    // Unreachable for a table that cannot fail; a value that is not a condition refuses.
    if (typeof v !== "boolean") return "deny";
    at = v ? code[at + 2]! : code[at + 3]!;
    if (at >= 0) continue;
    if (fork < 0) return at === TRUE_EXIT ? "allow" : "deny";
    if (approver === null) return at === TRUE_EXIT ? "allow" : "gated";
    if (at === FALSE_EXIT) return "deny";
    approver = null;
    at = fork;
  }
}

/** A called row's value that is not a condition: its failure, the type error of its receiver, or the table's value. */
function notCondition(receiver: Receiver | null, v: Evaluated): Evaluated {
  if (v instanceof Failure || receiver === null) return v;
  return fail("runtime-type", `${receiver.message}, not \`${describe(v)}\``, receiver.span);
}

/** A name's value. Reading the request's `approver` marks the meter, as the compiled name does. */
function read(table: LogicTable, field: number, env: TableEnv, meter: Meter): Value {
  switch (field) {
    case AMOUNT:
      return env.amount_minor;
    case CURRENCY:
      return env.currency;
    case TOOL:
      return env.tool;
    case AGENT:
      return env.agent;
    case PRINCIPAL:
      return env.principal;
    case AUDIENCE:
      return env.audience;
    case USES:
      return env.uses;
    case SPENT:
      return env.spent_minor;
    case HOUR:
      return env.hour_utc;
    case WEEKDAY:
      return env.weekday_utc;
    default:
      if (field !== APPROVER) throw new RangeError(`no name is numbered ${field}`);
      if (table.approver !== undefined) return table.approver;
      if (meter !== NEVER_CHARGED) meter.approverRead = true;
      return env.approver ?? null;
  }
}

/** A test of a name's value against its literal; the checker saw to both types (TableSource.test). */
function compare(test: number, v: Value, literal: Value): boolean {
  switch (test) {
    case LT:
      return (v as number) < (literal as number);
    case LE:
      return (v as number) <= (literal as number);
    case GT:
      return (v as number) > (literal as number);
    case GE:
      return (v as number) >= (literal as number);
    case EQ:
      return v === literal;
    case NE:
      return v !== literal;
    case IN:
      return (literal as readonly Value[]).includes(v);
    case STARTS:
      return (v as string).startsWith(literal as string);
    case ENDS:
      return (v as string).endsWith(literal as string);
    default:
      throw new RangeError(`no test is numbered ${test}`);
  }
}
