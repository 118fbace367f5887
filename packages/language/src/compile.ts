// Pipeline step 4 of 4: the checked AST compiled once into closures (no eval, no new Function).
import type { Span } from "@agent-authority/grammar";
import { chainOperands, type Expr, type ExprOf } from "./ast.js";
import type { TypeTable } from "./check.js";
import { TYPES, type Type, type TypeKind } from "./types.js";
import type { FunctionName, PolicyEnvironment } from "./environment.js";
import { FUNCTION_COSTS, sizeOf, stringUnits, urlReadingUnits } from "./cost.js";
import { PATH_URL_FUNCTIONS, type PathUrlFunction, UrlReading } from "./paths.js";
import { LIMITS } from "./limits.js";
import { compileTable, type LogicTable, oneCall, SOME_APPROVER, type TableOp, tableReads, type TableTest } from "./table.js";
import {
  charge,
  codePointLength,
  compareStrings,
  costExceeded,
  describe,
  equals,
  type Evaluated,
  fail,
  Failure,
  isInt,
  listTooLong,
  member,
  type Meter,
  NEVER_CHARGED,
  readPath,
  type Value,
} from "./values.js";

/** The environment as evaluation sees it; `approver` may be absent (read as null). */
export type EvalEnv = Omit<PolicyEnvironment, "approver"> & { readonly approver?: string | null };

/**
 * A compiled node: returns its value, or the Failure that stopped it. Work that grows with a value
 * is charged to `meter`, which belongs to the one evaluation under way.
 */
export type Evaluator = (env: EvalEnv, meter: Meter) => Evaluated;

/**
 * A compiled node.
 *
 * INVARIANT (charging-can-fail): every closure that charges its meter is compiled with `canFail:
 * true` (charging can fail with `cost-exceeded`), and a node compiled with `canFail: false` has only
 * children compiled so too. So a tree whose root cannot fail never touches its meter.
 */
export interface Compiled {
  readonly fn: Evaluator;
  /** False when the node can never fail at run time, so parents skip the failure check. */
  readonly canFail: boolean;
}

/** Compiles a checked expression. `types` is the checker's result for the same tree. */
export function compileExpr(root: Expr, types: TypeTable): Evaluator {
  return new Compiler(types).compile(root).fn;
}

/** Compiles a checked expression, saying whether it can fail (and so whether it charges a meter). */
export function compileChecked(root: Expr, types: TypeTable): Compiled {
  return new Compiler(types).compile(root);
}

/**
 * Compiles a checked expression in which `approver` reads as one fixed non-null string. A policy
 * that compares `approver` with `null` alone (residual.ts `onlyNullApprover`) has, with any
 * approval, this tree's value.
 */
export function compileNonNullApprover(root: Expr, types: TypeTable): Compiled {
  return new Compiler(types, undefined, NON_NULL_APPROVER).compile(root);
}

/**
 * A policy's root compiled as one table of tests (table.ts): the same values, failures and charges
 * as compileChecked's closures, read by one loop; with `rows` false, those closures as the table's
 * one row. `nonNull` fixes `approver` as compileNonNullApprover does.
 */
export function compileLogicTable(
  root: Expr,
  types: TypeTable,
  options: { readonly nonNull: boolean; readonly rows: boolean },
): { readonly table: LogicTable; readonly canFail: boolean } {
  const compiler = new Compiler(types, undefined, options.nonNull ? NON_NULL_APPROVER : undefined);
  if (options.rows) return compiler.table(root);
  // The general path: the closures alone, as one row whose value is the table's.
  const whole = compiler.compile(root);
  return { table: oneCall(whole.fn), canFail: whole.canFail };
}

/** The approver of compileNonNullApprover: only that it is not null is ever read. */
const NON_NULL_APPROVER = SOME_APPROVER;

/**
 * For every compiled node of a checked tree, whether evaluating it can fail at run time (false
 * means never, for any environment). Inner nodes of a logical chain are compiled as the chain and
 * are absent. Lint reads this to claim only what holds under the error rules.
 */
export function failureMap(root: Expr, types: TypeTable): ReadonlyMap<Expr, boolean> {
  const record = new Map<Expr, boolean>();
  new Compiler(types, record).compile(root);
  return record;
}

/**
 * A path or URL function: its arguments must be strings at run time, and an input the function
 * refuses (a relative path, `..` hidden in an escape, userinfo, …) fails closed with its own code.
 */
function pathUrlCall(callee: string, f: PathUrlFunction, args: readonly Compiled[], span: Span): Compiled {
  const a = args[0]!.fn;
  const b = args.length > 1 ? args[1]!.fn : undefined;
  const max = f.code === "invalid-path" ? LIMITS.pathBytesMax : LIMITS.urlBytesMax;
  const tooLong = `the ${f.code === "invalid-path" ? "path" : "URL"} is longer than ${max} bytes`;
  const read = f.read;
  return {
    fn: (env, meter) => {
      const x = a(env, meter);
      if (x instanceof Failure) return x;
      const y = b === undefined ? "" : b(env, meter);
      if (y instanceof Failure) return y;
      if (typeof x !== "string" || typeof y !== "string") {
        return fail("runtime-type", `\`${callee}\` takes strings, not \`${describe(typeof x !== "string" ? x : y)}\``, span);
      }
      // A string longer than the limit in code units is longer still in UTF-8: refused unread, so
      // that no more than the limit is ever parsed (FUNCTION_COSTS charges no more).
      if (x.length > max || y.length > max) return fail(f.code, `\`${callee}\` refuses its input: ${tooLong}`, span);
      const units = FUNCTION_COSTS[callee as FunctionName]([x.length, y.length]);
      const r = read === undefined ? applyCharged(f, x, y, units, meter) : readCharged(read, x, b === undefined ? x : y, units, meter);
      if (r === undefined) return costExceeded(meter, span);
      return r.ok ? r.value : fail(f.code, `\`${callee}\` refuses its input: ${r.problem}`, span);
    },
    // Any string may be refused, so every call can fail.
    canFail: true,
  };
}

type Applied = ReturnType<PathUrlFunction["apply"]>;

/** A path function charged its units, then applied; undefined when the charge passes the limit. */
function applyCharged(f: PathUrlFunction, x: string, y: string, units: number, meter: Meter): Applied | undefined {
  meter.spent += units;
  return meter.spent <= meter.limit ? f.apply(x, y) : undefined;
}

/**
 * A URL function on the evaluation's readings of `x` and `y` (`y` is `x` for a one-argument
 * function): a string read before costs nothing more, a new one its reading (urlReadingUnits), all
 * charged before any is made; undefined when the charge passes the limit (INVARIANT (charged-before-work)).
 */
function readCharged(read: NonNullable<PathUrlFunction["read"]>, x: string, y: string, units: number, meter: Meter): Applied | undefined {
  const urls = (meter.urls ??= new Map<string, UrlReading>());
  let rx = urls.get(x);
  let ry = y === x ? rx : urls.get(y);
  const total = units + (rx === undefined ? urlReadingUnits(x.length) : 0) + (ry === undefined && y !== x ? urlReadingUnits(y.length) : 0);
  meter.spent += total;
  if (meter.spent > meter.limit) return undefined;
  if (rx === undefined) urls.set(x, (rx = new UrlReading(x)));
  if (ry === undefined) urls.set(y, (ry = y === x ? rx : new UrlReading(y)));
  return read(rx, ry);
}

class Compiler {
  constructor(
    private readonly types: TypeTable,
    private readonly record?: Map<Expr, boolean>,
    /** When set, what `approver` reads as (compileNonNullApprover). */
    private readonly approver?: string,
  ) {}

  type(e: Expr): Type {
    return this.types.get(e) ?? TYPES.dyn;
  }

  /** The kind of `e`'s type: what every specialisation below reads. */
  kind(e: Expr): TypeKind {
    return this.type(e).kind;
  }

  compile(e: Expr): Compiled {
    const c = this.compileNode(e);
    this.record?.set(e, c.canFail);
    return c;
  }

  /** `root` as a table whose rows are this compiler's tests (tableTest) and closures. */
  table(root: Expr): { readonly table: LogicTable; readonly canFail: boolean } {
    const source = {
      test: (e: Expr) => this.tableTest(e),
      call: (e: Expr) => this.compile(e),
      dynamic: (e: Expr) => this.kind(e) === "dyn",
    };
    return compileTable(root, source, this.approver);
  }

  /**
   * `e` as a table's test: a comparison of a name with a literal that compiles below to a closure
   * that cannot fail and charges nothing (`ordering`, `equality` and `membership` on static
   * types, `affixCall` on two strings), so the test gives the value that closure gives.
   */
  private tableTest(e: Expr): TableTest | undefined {
    if (e.kind === "call") {
      if (e.callee !== "startsWith" && e.callee !== "endsWith") return undefined;
      const [subject, affix] = e.args;
      const name = nameOf(subject!);
      if (name === undefined || affix!.kind !== "string" || this.kind(subject!) !== "string" || this.kind(affix!) !== "string")
        return undefined;
      return { op: e.callee, name, literal: affix.value };
    }
    if (e.kind !== "binary") return undefined;
    const lk = this.kind(e.left);
    const rk = this.kind(e.right);
    if (e.op === "in") {
      const name = nameOf(e.left);
      const list = literalList(e.right);
      const needle = lk === "int" || lk === "string" || lk === "bool" || lk === "approver";
      return name !== undefined && list !== undefined && needle && rk !== "dyn" ? { op: "in", name, literal: list } : undefined;
    }
    const flipped = nameOf(e.left) === undefined;
    const name = nameOf(flipped ? e.right : e.left);
    const literal = flipped ? e.left : e.right;
    if (name === undefined || (literal.kind !== "int" && literal.kind !== "string" && literal.kind !== "null")) return undefined;
    const value = literal.kind === "null" ? null : literal.value;
    if (e.op === "==" || e.op === "!=") return scalar(lk) && scalar(rk) ? { op: e.op, name, literal: value } : undefined;
    const op = flipped ? FLIPPED.get(e.op) : ORDERINGS.get(e.op);
    return lk === "int" && rk === "int" && op !== undefined ? { op, name, literal: value } : undefined;
  }

  private compileNode(e: Expr): Compiled {
    switch (e.kind) {
      case "int":
      case "string":
      case "bool": {
        const value = e.value;
        return { fn: () => value, canFail: false };
      }
      case "null":
        return { fn: () => null, canFail: false };
      case "list":
        return this.list(e);
      case "name":
        return e.name === "approver" && this.approver !== undefined ? fixedApprover(this.approver) : name(e);
      case "call":
        return this.call(e);
      case "unary":
        return this.unary(e);
      case "binary":
        return this.binary(e);
    }
  }

  private list(e: ExprOf<"list">): Compiled {
    const items = e.elements.map((x) => this.compile(x));
    if (items.length === e.elements.length && e.elements.every((x) => x.kind === "int" || x.kind === "string" || x.kind === "bool")) {
      const value = Object.freeze(e.elements.map((x) => (x as { value: Value }).value));
      return { fn: () => value, canFail: false };
    }
    const fns = items.map((x) => x.fn);
    return {
      fn: (env, meter) => {
        const out: Value[] = [];
        for (const f of fns) {
          const v = f(env, meter);
          if (v instanceof Failure) return v;
          out.push(v);
        }
        return out;
      },
      canFail: items.some((x) => x.canFail),
    };
  }

  private call(e: ExprOf<"call">): Compiled {
    const args = e.args.map((a) => this.compile(a));
    // A function of a value from `args` is charged its cost from FUNCTION_COSTS before it runs
    // (INVARIANT (charged-before-work)); of literals and environment names, its node pays for it.
    if (e.callee === "size") return this.sizeCall(e, args[0]!);
    if (e.callee === "lower") return this.lowerCall(e, args[0]!);
    const pathUrl = PATH_URL_FUNCTIONS.get(e.callee);
    if (pathUrl !== undefined) return pathUrlCall(e.callee, pathUrl, args, e.span);
    return this.affixCall(e, args[0]!, args[1]!);
  }

  /** `size(x)`: code points of a string, items of a list (INVARIANT (charged-before-work)). */
  private sizeCall(e: ExprOf<"call">, compiled: Compiled): Compiled {
    const span = e.span;
    return this.chargedCall(e, compiled, FUNCTION_COSTS.size, (v) => {
      if (typeof v === "string") return codePointLength(v);
      if (Array.isArray(v)) return listTooLong(v, span) ?? v.length;
      return fail("runtime-type", `\`size\` takes a string or a list, not \`${describe(v)}\``, span);
    });
  }

  /** `lower(s)` (INVARIANT (charged-before-work)). */
  private lowerCall(e: ExprOf<"call">, compiled: Compiled): Compiled {
    const span = e.span;
    return this.chargedCall(e, compiled, FUNCTION_COSTS.lower, (v) =>
      typeof v === "string" ? v.toLowerCase() : fail("runtime-type", `\`lower\` takes a string, not \`${describe(v)}\``, span),
    );
  }

  /**
   * A one-argument function whose work grows with its argument: the argument, then, when its size
   * is known only at run time, the price of that size charged before `apply` does the work.
   */
  private chargedCall(
    e: ExprOf<"call">,
    compiled: Compiled,
    price: (sizes: readonly number[]) => number,
    apply: (v: Value) => Value | Failure,
  ): Compiled {
    const arg = compiled.fn;
    const span = e.span;
    const dyn = this.kind(e.args[0]!) === "dyn";
    return {
      fn: (env, meter) => {
        const v = arg(env, meter);
        if (v instanceof Failure) return v;
        const over = dyn ? charge(meter, price([sizeOf(v)]), span) : undefined;
        return over ?? apply(v);
      },
      canFail: compiled.canFail || dyn,
    };
  }

  /** `startsWith` and `endsWith`: no checks when both sides are known strings that cannot fail, else typed and charged. */
  private affixCall(e: ExprOf<"call">, subject: Compiled, affix: Compiled): Compiled {
    const span = e.span;
    const starts = e.callee === "startsWith";
    const s = subject.fn;
    const p = affix.fn;
    const callee = e.callee;
    const cost = starts ? FUNCTION_COSTS.startsWith : FUNCTION_COSTS.endsWith;
    if (this.kind(e.args[0]!) === "string" && this.kind(e.args[1]!) === "string" && !subject.canFail && !affix.canFail) {
      const fn: Evaluator = starts
        ? (env, meter) => (s(env, meter) as string).startsWith(p(env, meter) as string)
        : (env, meter) => (s(env, meter) as string).endsWith(p(env, meter) as string);
      return { fn, canFail: false };
    }
    return {
      fn: (env, meter) => {
        const a = s(env, meter);
        if (a instanceof Failure) return a;
        const b = p(env, meter);
        if (b instanceof Failure) return b;
        if (typeof a !== "string" || typeof b !== "string") {
          return fail("runtime-type", `\`${callee}\` takes strings, not \`${describe(typeof a !== "string" ? a : b)}\``, span);
        }
        const over = charge(meter, cost([a.length, b.length]), span);
        if (over !== undefined) return over;
        return starts ? a.startsWith(b) : a.endsWith(b);
      },
      canFail: true,
    };
  }

  /**
   * A chain `a && b && c` (or `||`), whatever its shape, as one loop over its operands instead of
   * nested closures. A failing operand is reported at the span of the node it is an operand of,
   * as the reference semantics have it.
   */
  private chain(e: ExprOf<"binary">): Compiled {
    const isAnd = e.op === "&&";
    const { operands, spans } = chainOperands(e);
    const fns: Evaluator[] = [];
    let safe = true;
    for (const x of operands) {
      const c = this.compile(x);
      fns.push(c.fn);
      if (c.canFail || this.kind(x) === "dyn") safe = false;
    }
    if (safe) {
      if (fns.length === 2) {
        const a = fns[0]!;
        const b = fns[1]!;
        return {
          fn: isAnd ? (env, meter) => a(env, meter) && b(env, meter) : (env, meter) => a(env, meter) || b(env, meter),
          canFail: false,
        };
      }
      return {
        fn: isAnd
          ? (env, meter) => {
              for (let i = 0; i < fns.length; i++) if (fns[i]!(env, meter) === false) return false;
              return true;
            }
          : (env, meter) => {
              for (let i = 0; i < fns.length; i++) if (fns[i]!(env, meter) === true) return true;
              return false;
            },
        canFail: false,
      };
    }
    // The general case: operands may fail or be dynamic; a non-bool is a type error at the span
    // of the operator that received it.
    const op = e.op;
    return {
      fn: (env, meter) => {
        for (let i = 0; i < fns.length; i++) {
          const v = fns[i]!(env, meter);
          // A condition first: the common case costs one `typeof`.
          if (typeof v === "boolean") {
            if (v !== isAnd) return v;
            continue;
          }
          if (v instanceof Failure) return v;
          return fail("runtime-type", `\`${op}\` takes conditions, not \`${describe(v)}\``, spans[i]!);
        }
        return isAnd;
      },
      canFail: true,
    };
  }

  private unary(e: ExprOf<"unary">): Compiled {
    const operand = this.compile(e.operand);
    const f = operand.fn;
    const span = e.span;
    const dyn = this.kind(e.operand) === "dyn";
    if (e.op === "!") {
      if (!operand.canFail && !dyn) return { fn: (env, meter) => !f(env, meter), canFail: false };
      return {
        fn: (env, meter) => {
          const v = f(env, meter);
          if (v instanceof Failure) return v;
          return typeof v === "boolean" ? !v : fail("runtime-type", `\`!\` takes a condition, not \`${describe(v)}\``, span);
        },
        canFail: true,
      };
    }
    if (!operand.canFail && !dyn) return { fn: (env, meter) => -(f(env, meter) as number) || 0, canFail: false };
    return {
      fn: (env, meter) => {
        const v = f(env, meter);
        if (v instanceof Failure) return v;
        return isInt(v) ? -v || 0 : fail("runtime-type", `\`-\` takes an int, not \`${describe(v)}\``, span);
      },
      canFail: true,
    };
  }

  private binary(e: ExprOf<"binary">): Compiled {
    // A logical chain compiles its own operands; compiling them here as well would redo every
    // level of a long chain once per enclosing level.
    if (e.op === "&&" || e.op === "||") return this.chain(e);
    const l = this.compile(e.left);
    const r = this.compile(e.right);
    const lt = this.type(e.left);
    const rt = this.type(e.right);
    const lk = lt.kind;
    const rk = rt.kind;
    switch (e.op) {
      case "+":
      case "-":
      case "*":
        return arithmetic(e.op, l, r, lk === "int" && rk === "int", e.span);
      case "==":
      case "!=":
        return equality(e.op === "!=", l, r, lk, rk, e.span);
      case "in":
        return membership(l, r, lt, rt, e.span);
      default:
        return ordering(e.op, l, r, lk, rk, e.span);
    }
  }
}

/** A name a table's test reads (table.ts `tableReads`); undefined for `args` and any other node. */
function nameOf(e: Expr): string | undefined {
  return e.kind === "name" && e.path.length === 0 && tableReads(e.name) ? e.name : undefined;
}

/** The value of a list of int, string and bool literals (as `list` compiles it), else undefined. */
function literalList(e: Expr): readonly Value[] | undefined {
  if (e.kind !== "list" || !e.elements.every((x) => x.kind === "int" || x.kind === "string" || x.kind === "bool")) return undefined;
  return Object.freeze(e.elements.map((x) => (x as { value: Value }).value));
}

/** The orderings, and each read from its other side: `5 < x` is `x > 5`. */
const ORDERINGS: ReadonlyMap<string, TableOp> = new Map<string, TableOp>([
  ["<", "<"],
  ["<=", "<="],
  [">", ">"],
  [">=", ">="],
]);
const FLIPPED: ReadonlyMap<string, TableOp> = new Map<string, TableOp>([
  ["<", ">"],
  ["<=", ">="],
  [">", "<"],
  [">=", "<="],
]);

/** `approver` read as one fixed value: it marks no meter, the value is known not to be the request's. */
function fixedApprover(value: string): Compiled {
  return { fn: () => value, canFail: false };
}

function name(e: ExprOf<"name">): Compiled {
  switch (e.name) {
    case "args": {
      const path = e.path;
      if (path.length === 1) {
        const key = path[0]!;
        return {
          fn: (env) => {
            const args = env.args as Record<string, unknown> | null | undefined;
            if (args === null || args === undefined || typeof args !== "object") return null;
            return Object.hasOwn(args, key) ? (args[key] ?? null) : null;
          },
          canFail: false,
        };
      }
      return { fn: (env) => readPath(env.args, path), canFail: false };
    }
    case "approver":
      return {
        fn: (env, meter) => {
          if (meter !== NEVER_CHARGED) meter.approverRead = true;
          return env.approver ?? null;
        },
        canFail: false,
      };
    case "amount_minor":
      return { fn: (env) => env.amount_minor, canFail: false };
    case "currency":
      return { fn: (env) => env.currency, canFail: false };
    case "tool":
      return { fn: (env) => env.tool, canFail: false };
    case "agent":
      return { fn: (env) => env.agent, canFail: false };
    case "principal":
      return { fn: (env) => env.principal, canFail: false };
    case "audience":
      return { fn: (env) => env.audience, canFail: false };
    case "uses":
      return { fn: (env) => env.uses, canFail: false };
    case "spent_minor":
      return { fn: (env) => env.spent_minor, canFail: false };
    case "hour_utc":
      return { fn: (env) => env.hour_utc, canFail: false };
    case "weekday_utc":
      return { fn: (env) => env.weekday_utc, canFail: false };
    default: {
      // Unreachable for a checked tree (the checker knows every name); an unknown name fails
      // closed rather than read whatever the environment object inherits.
      const span = e.span;
      const message = `unknown name \`${e.name}\``;
      return { fn: () => fail("runtime-type", message, span), canFail: true };
    }
  }
}

function arithmetic(op: "+" | "-" | "*", l: Compiled, r: Compiled, ints: boolean, span: Span): Compiled {
  const lf = l.fn;
  const rf = r.fn;
  if (ints && !l.canFail && !r.canFail) {
    // Two static ints: only overflow can fail.
    const overflow = (): Failure =>
      fail(
        "integer-overflow",
        `\`${op}\` overflows the safe integer range`,
        span,
        "integers are safe integers, between -(2^53 - 1) and 2^53 - 1",
      );
    const fn: Evaluator =
      op === "+"
        ? (env, meter) => {
            const v = (lf(env, meter) as number) + (rf(env, meter) as number);
            return Number.isSafeInteger(v) ? v : overflow();
          }
        : op === "-"
          ? (env, meter) => {
              const v = (lf(env, meter) as number) - (rf(env, meter) as number);
              return Number.isSafeInteger(v) ? v || 0 : overflow();
            }
          : (env, meter) => {
              const v = (lf(env, meter) as number) * (rf(env, meter) as number);
              return Number.isSafeInteger(v) ? v || 0 : overflow();
            };
    return { fn, canFail: true };
  }
  return {
    fn: (env, meter) => {
      const a = lf(env, meter);
      if (a instanceof Failure) return a;
      const b = rf(env, meter);
      if (b instanceof Failure) return b;
      if (!isInt(a) || !isInt(b)) return fail("runtime-type", `\`${op}\` takes ints, not \`${describe(isInt(a) ? b : a)}\``, span);
      const v = op === "+" ? a + b : op === "-" ? a - b : a * b;
      if (!Number.isSafeInteger(v))
        return fail(
          "integer-overflow",
          `\`${op}\` overflows the safe integer range`,
          span,
          "integers are safe integers, between -(2^53 - 1) and 2^53 - 1",
        );
      return v || 0;
    },
    canFail: true,
  };
}

/** Types whose values are compared with `===` directly: one static scalar type (or null). */
function scalar(t: TypeKind): boolean {
  return t === "int" || t === "string" || t === "bool" || t === "null" || t === "approver";
}

/** The JavaScript `typeof` of a static scalar type's values. */
const jsType: Readonly<Partial<Record<TypeKind, string>>> = Object.freeze({ int: "number", string: "string", bool: "boolean" });

function equality(negate: boolean, l: Compiled, r: Compiled, lt: TypeKind, rt: TypeKind, span: Span): Compiled {
  const lf = l.fn;
  const rf = r.fn;
  if (scalar(lt) && scalar(rt) && !l.canFail && !r.canFail) {
    return {
      fn: negate ? (env, meter) => lf(env, meter) !== rf(env, meter) : (env, meter) => lf(env, meter) === rf(env, meter),
      canFail: false,
    };
  }
  // A dynamic value against a static int, string or bool: null is unequal, the same type compares
  // with `===`, anything else is the general rule (a run-time type error).
  const staticSide =
    lt === "dyn" && !l.canFail && !r.canFail ? jsType[rt] : rt === "dyn" && !l.canFail && !r.canFail ? jsType[lt] : undefined;
  if (staticSide !== undefined) {
    return {
      fn: (env, meter) => {
        const a = lf(env, meter);
        const b = rf(env, meter);
        const d = lt === "dyn" ? a : b;
        if (d === null) return negate;
        if (typeof d === staticSide && (staticSide !== "number" || Number.isSafeInteger(d))) return (a === b) !== negate;
        const v = equals(a, b, meter, span);
        return v instanceof Failure ? v : v !== negate;
      },
      canFail: true,
    };
  }
  return {
    fn: (env, meter) => {
      const a = lf(env, meter);
      if (a instanceof Failure) return a;
      const b = rf(env, meter);
      if (b instanceof Failure) return b;
      const v = equals(a, b, meter, span);
      return v instanceof Failure ? v : v !== negate;
    },
    canFail: true,
  };
}

function membership(l: Compiled, r: Compiled, lt: Type, rt: Type, span: Span): Compiled {
  const lf = l.fn;
  const rf = r.fn;
  const lk = lt.kind;
  if ((lk === "int" || lk === "string" || lk === "bool" || lk === "approver") && rt.kind !== "dyn" && !l.canFail && !r.canFail) {
    // A static needle and a static list of its type (the checker saw to it): plain `includes`.
    return { fn: (env, meter) => (rf(env, meter) as readonly Value[]).includes(lf(env, meter)), canFail: false };
  }
  const elementType = rt.kind === "list" && rt.element !== null ? jsType[rt.element.kind] : undefined;
  if (lk === "dyn" && elementType !== undefined && !l.canFail && !r.canFail) {
    // A dynamic needle in a static list of one type: null is never found, a value of that type is
    // found with `includes`, and anything else is the general rule (a run-time type error).
    return {
      fn: (env, meter) => {
        const a = lf(env, meter);
        const list = rf(env, meter) as readonly Value[];
        if (a === null) return false;
        if (typeof a === elementType && (elementType !== "number" || Number.isSafeInteger(a))) return list.includes(a);
        return member(a, list, meter, span);
      },
      canFail: true,
    };
  }
  return {
    fn: (env, meter) => {
      const a = lf(env, meter);
      if (a instanceof Failure) return a;
      const b = rf(env, meter);
      if (b instanceof Failure) return b;
      return member(a, b, meter, span);
    },
    canFail: true,
  };
}

function ordering(op: string, l: Compiled, r: Compiled, lt: TypeKind, rt: TypeKind, span: Span): Compiled {
  const lf = l.fn;
  const rf = r.fn;
  if (lt === "int" && rt === "int" && !l.canFail && !r.canFail) {
    switch (op) {
      case "<":
        return { fn: (env, meter) => (lf(env, meter) as number) < (rf(env, meter) as number), canFail: false };
      case "<=":
        return { fn: (env, meter) => (lf(env, meter) as number) <= (rf(env, meter) as number), canFail: false };
      case ">":
        return { fn: (env, meter) => (lf(env, meter) as number) > (rf(env, meter) as number), canFail: false };
      default:
        return { fn: (env, meter) => (lf(env, meter) as number) >= (rf(env, meter) as number), canFail: false };
    }
  }
  const test =
    op === "<" ? (c: number) => c < 0 : op === "<=" ? (c: number) => c <= 0 : op === ">" ? (c: number) => c > 0 : (c: number) => c >= 0;
  return {
    fn: (env, meter) => {
      const a = lf(env, meter);
      if (a instanceof Failure) return a;
      const b = rf(env, meter);
      if (b instanceof Failure) return b;
      if (isInt(a) && isInt(b)) return test(a - b);
      if (typeof a === "string" && typeof b === "string")
        return charge(meter, stringUnits(Math.min(a.length, b.length)), span) ?? test(compareStrings(a, b));
      return fail(
        "runtime-type",
        `cannot order \`${describe(a)}\` and \`${describe(b)}\``,
        span,
        "ordering is defined on two ints or two strings",
      );
    },
    canFail: true,
  };
}
