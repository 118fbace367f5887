// A small tree-walking interpreter of the policy language, written apart from the compiler so that
// property tests can hold the compiled evaluator to it. Slow and plain on purpose.
import type { Span } from "@agent-authority/grammar";
import type { Expr } from "../src/ast.js";

export type RefResult = { ok: true; value: unknown } | { ok: false; code: string; span: Span };

class RuntimeError {
  constructor(
    readonly code: string,
    readonly span: Span,
  ) {}
}

const LIST_MAX = 1024;

function typeOf(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (typeof v === "number") return Number.isSafeInteger(v) ? "int" : "bad-number";
  if (typeof v === "string") return "string";
  if (typeof v === "boolean") return "bool";
  if (Array.isArray(v)) return "list";
  return "object";
}

function eq(a: unknown, b: unknown, span: Span): boolean {
  const ta = typeOf(a);
  const tb = typeOf(b);
  if (ta === "null" || tb === "null") return ta === tb;
  if (ta !== tb || ta === "object" || ta === "bad-number") throw new RuntimeError("runtime-type", span);
  if (ta === "list") {
    const la = a as unknown[];
    const lb = b as unknown[];
    if (la.length !== lb.length) return false;
    return la.every((x, i) => eq(x, lb[i], span));
  }
  return a === b;
}

function codePoints(s: string): number[] {
  return Array.from(s, (c) => c.codePointAt(0)!);
}

function compare(a: unknown, b: unknown, span: Span): number {
  if (typeOf(a) === "int" && typeOf(b) === "int") return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
  if (typeof a === "string" && typeof b === "string") {
    const x = codePoints(a);
    const y = codePoints(b);
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
    return x.length - y.length;
  }
  throw new RuntimeError("runtime-type", span);
}

function int(v: unknown, span: Span): number {
  if (typeOf(v) !== "int") throw new RuntimeError("runtime-type", span);
  return v as number;
}

function bool(v: unknown, span: Span): boolean {
  if (typeof v !== "boolean") throw new RuntimeError("runtime-type", span);
  return v;
}

function str(v: unknown, span: Span): string {
  if (typeof v !== "string") throw new RuntimeError("runtime-type", span);
  return v;
}

function safe(v: number, span: Span): number {
  if (!Number.isSafeInteger(v)) throw new RuntimeError("integer-overflow", span);
  return v === 0 ? 0 : v;
}

function ev(e: Expr, env: Record<string, unknown>): unknown {
  switch (e.kind) {
    case "int":
    case "string":
    case "bool":
      return e.value;
    case "null":
      return null;
    case "list":
      return e.elements.map((x) => ev(x, env));
    case "name": {
      if (e.name !== "args") return env[e.name] ?? null;
      let v: unknown = env["args"];
      for (const key of e.path) {
        if (typeOf(v) !== "object") return null;
        v = Object.hasOwn(v as object, key) ? (v as Record<string, unknown>)[key] : null;
      }
      return v ?? null;
    }
    case "call": {
      const args = e.args.map((x) => ev(x, env));
      switch (e.callee) {
        case "size":
          if (typeof args[0] === "string") return codePoints(args[0]).length;
          if (Array.isArray(args[0])) return args[0].length;
          throw new RuntimeError("runtime-type", e.span);
        case "lower":
          return str(args[0], e.span).toLowerCase();
        case "startsWith":
          return str(args[0], e.span).startsWith(str(args[1], e.span));
        default:
          return str(args[0], e.span).endsWith(str(args[1], e.span));
      }
    }
    case "unary": {
      const v = ev(e.operand, env);
      return e.op === "!" ? !bool(v, e.span) : safe(-int(v, e.span), e.span);
    }
    case "binary": {
      if (e.op === "&&") return bool(ev(e.left, env), e.span) ? bool(ev(e.right, env), e.span) : false;
      if (e.op === "||") return bool(ev(e.left, env), e.span) ? true : bool(ev(e.right, env), e.span);
      const a = ev(e.left, env);
      const b = ev(e.right, env);
      switch (e.op) {
        case "+":
          return safe(int(a, e.span) + int(b, e.span), e.span);
        case "-":
          return safe(int(a, e.span) - int(b, e.span), e.span);
        case "*":
          return safe(int(a, e.span) * int(b, e.span), e.span);
        case "==":
          return eq(a, b, e.span);
        case "!=":
          return !eq(a, b, e.span);
        case "in": {
          if (!Array.isArray(b)) throw new RuntimeError("runtime-type", e.span);
          if (b.length > LIST_MAX) throw new RuntimeError("list-too-long", e.span);
          for (const x of b) if (eq(a, x, e.span)) return true;
          return false;
        }
        case "<":
          return compare(a, b, e.span) < 0;
        case "<=":
          return compare(a, b, e.span) <= 0;
        case ">":
          return compare(a, b, e.span) > 0;
        default:
          return compare(a, b, e.span) >= 0;
      }
    }
  }
}

/** Evaluates a policy: a boolean, or the code and span of the run-time error. */
export function referenceEvaluate(root: Expr, env: Record<string, unknown>): RefResult {
  try {
    const value = ev(root, env);
    if (typeof value !== "boolean") return { ok: false, code: "runtime-type", span: root.span };
    return { ok: true, value };
  } catch (e) {
    if (e instanceof RuntimeError) return { ok: false, code: e.code, span: e.span };
    throw e;
  }
}

/** The brute-force decision: try every approver of `universe` (null is always tried too). */
export function oracleDecide(root: Expr, env: Record<string, unknown>, universe: readonly string[]): "allow" | "deny" | "gated" {
  const at = (approver: string | null): boolean => {
    const r = referenceEvaluate(root, { ...env, approver });
    return r.ok && r.value === true;
  };
  const satisfiedBy = universe.filter((a) => at(a));
  if (at(null) && satisfiedBy.length === universe.length) return "allow";
  return satisfiedBy.length > 0 ? "gated" : "deny";
}
