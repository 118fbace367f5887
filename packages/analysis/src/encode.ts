// A checked policy as a formula: each node's value and whether evaluating it fails, exactly as the evaluator runs it.
import type { Arith, Bool, Context } from "z3-solver";
import { formatExpr, LIMITS, type Expr } from "@agent-authority/language";
import { constant, type EnvName, type Inputs, safe, type Sym, type SymBuilder, TAG } from "./inputs.js";
import { stringTerm, Unsupported } from "./strings.js";
import { and, ite, not, or, tagIs } from "./logic.js";
import { callFunction, sharedFunctions, type SharedFunctions } from "./functions.js";

type B = Bool<"main">;
type BinaryExpr = Extract<Expr, { kind: "binary" }>;

/** Encodes policies over one set of inputs; the functions it leaves uninterpreted are shared, so two policies agree on them. */
export class Encoder implements SymBuilder {
  readonly c: Context<"main">;
  private readonly literals = new Map<string, number>();

  constructor(readonly inputs: Inputs) {
    this.c = inputs.ctx;
  }

  /** Whether the policy allows: it evaluates, without a run-time error, to `true`. */
  allows(root: Expr): B {
    const v = this.expr(root);
    return and(this.c, v.ok, tagIs(this.c, v.tag, TAG.bool), v.bool);
  }

  /** Whether the policy allows, and whether it evaluates without a run-time error. */
  outcome(root: Expr): { allows: B; ok: B } {
    const v = this.expr(root);
    return { allows: and(this.c, v.ok, tagIs(this.c, v.tag, TAG.bool), v.bool), ok: v.ok };
  }

  /** The symbolic value of `e`. */
  expr(e: Expr): Sym {
    const c = this.c;
    switch (e.kind) {
      case "int":
        return { ...constant(c, TAG.int), int: c.Int.val(e.value) };
      case "string":
        return { ...constant(c, TAG.string), str: stringTerm(c, e.value) };
      case "bool":
        return { ...constant(c, TAG.bool), bool: c.Bool.val(e.value) };
      case "null":
        return constant(c, TAG.null);
      case "list":
        return this.list(e);
      case "name":
        if (e.name === "args") return this.inputs.arg(e.path);
        if (e.path.length > 0) throw new Unsupported(`a field of \`${e.name}\``);
        return this.inputs.name(e.name as EnvName);
      case "call":
        return callFunction(
          this,
          e.callee,
          e.args.map((a) => this.expr(a)),
        );
      case "unary":
        return this.unary(e.op, this.expr(e.operand));
      case "binary":
        return this.binary(e);
    }
  }

  /** A bool result that fails unless `ok`. */
  boolean(ok: B, value: B): Sym {
    return { ...constant(this.c, TAG.bool), ok, bool: value };
  }

  /** An int result that fails unless `ok` and the result is a safe integer. */
  integer(ok: B, value: Arith<"main">): Sym {
    return { ...constant(this.c, TAG.int), ok: and(this.c, ok, safe(this.c, value)), int: value };
  }

  private list(e: Extract<Expr, { kind: "list" }>): Sym {
    const elements = e.elements.map((x) => this.expr(x));
    const constant_ = e.elements.every((x) => x.kind === "int" || x.kind === "string" || x.kind === "bool");
    const literal = constant_ ? formatExpr(e) : undefined;
    const ref = literal === undefined ? -1 : this.literalId(literal);
    return {
      ...constant(this.c, TAG.list),
      ok: and(this.c, ...elements.map((x) => x.ok)),
      ref: this.c.Int.val(ref),
      elements,
      ...(literal !== undefined ? { literal } : {}),
    };
  }

  /** A negative identity for each distinct constant list literal, apart from every list read from `args`. */
  private literalId(text: string): number {
    let id = this.literals.get(text);
    if (id === undefined) {
      id = -LIMITS.integerMax + this.literals.size;
      this.literals.set(text, id);
    }
    return id;
  }

  private unary(op: "!" | "-", v: Sym): Sym {
    const c = this.c;
    if (op === "!") return this.boolean(and(c, v.ok, tagIs(c, v.tag, TAG.bool)), not(c, v.bool));
    return this.integer(and(c, v.ok, tagIs(c, v.tag, TAG.int)), v.int.neg());
  }

  private binary(e: BinaryExpr): Sym {
    if (e.op === "&&" || e.op === "||") return this.chain(e.op, this.operands(e));
    const l = this.expr(e.left);
    const r = this.expr(e.right);
    const c = this.c;
    const both = and(c, l.ok, r.ok);
    switch (e.op) {
      case "+":
      case "-":
      case "*": {
        const ints = and(c, both, tagIs(c, l.tag, TAG.int), tagIs(c, r.tag, TAG.int));
        return this.integer(ints, e.op === "+" ? l.int.add(r.int) : e.op === "-" ? l.int.sub(r.int) : l.int.mul(r.int));
      }
      case "==":
      case "!=": {
        const eq = this.equality(l, r);
        return this.boolean(and(c, both, not(c, eq.err)), e.op === "==" ? eq.val : not(c, eq.val));
      }
      case "in": {
        const m = this.membership(l, r);
        return this.boolean(and(c, both, not(c, m.err)), m.val);
      }
      default:
        return this.ordering(e.op, l, r);
    }
  }

  /** The operands of a run of one logical operator, flat. */
  private operands(e: BinaryExpr): Expr[] {
    const out: Expr[] = [];
    const stack: Expr[] = [e.right, e.left];
    while (stack.length > 0) {
      const node = stack.pop()!;
      if (node.kind === "binary" && node.op === e.op) stack.push(node.right, node.left);
      else out.push(node);
    }
    return out;
  }

  /**
   * `&&` and `||`, left to right: the first operand that decides stops, a failure or non-condition
   * before it fails. When it evaluates, its value is the plain conjunction (disjunction) of the
   * operands' values, which is kept flat; only whether it evaluates is built operand by operand.
   */
  private chain(op: "&&" | "||", operands: readonly Expr[]): Sym {
    const c = this.c;
    const isAnd = op === "&&";
    const values = operands.map((o) => this.expr(o));
    let ok: B = c.Bool.val(true);
    for (let i = values.length - 1; i >= 0; i--) {
      const v = values[i]!;
      const isBool = and(c, v.ok, tagIs(c, v.tag, TAG.bool));
      ok = and(c, isBool, or(c, isAnd ? not(c, v.bool) : v.bool, ok));
    }
    const bools = values.map((v) => v.bool);
    return this.boolean(ok, isAnd ? and(c, ...bools) : or(c, ...bools));
  }

  private ordering(op: string, l: Sym, r: Sym): Sym {
    const c = this.c;
    const ints = and(c, tagIs(c, l.tag, TAG.int), tagIs(c, r.tag, TAG.int));
    const strings = and(c, tagIs(c, l.tag, TAG.string), tagIs(c, r.tag, TAG.string));
    const ok = and(c, l.ok, r.ok, or(c, ints, strings));
    const [a, b, strict] = op === "<" ? [l, r, true] : op === "<=" ? [l, r, false] : op === ">" ? [r, l, true] : [r, l, false];
    const intTest = strict ? a.int.lt(b.int) : a.int.le(b.int);
    const strTest = strict ? a.str.lt(b.str) : a.str.le(b.str);
    return this.boolean(ok, ite(c, ints, intTest, strTest));
  }

  /** Equality of two evaluated values: null equals only null, one scalar type compares, lists element by element, the rest fails. */
  equality(l: Sym, r: Sym): { err: B; val: B } {
    const c = this.c;
    const eitherNull = or(c, tagIs(c, l.tag, TAG.null), tagIs(c, r.tag, TAG.null));
    const bothNull = and(c, tagIs(c, l.tag, TAG.null), tagIs(c, r.tag, TAG.null));
    const same = (tag: number): B => and(c, tagIs(c, l.tag, tag), tagIs(c, r.tag, tag));
    const lists = this.listEquality(l, r);
    const scalar = or(c, same(TAG.int), same(TAG.string), same(TAG.bool));
    const val = ite(
      c,
      eitherNull,
      bothNull,
      ite(
        c,
        same(TAG.int),
        l.int.eq(r.int),
        ite(c, same(TAG.string), l.str.eq(r.str), ite(c, same(TAG.bool), l.bool.eq(r.bool), lists.val)),
      ),
    );
    const err = and(c, not(c, eitherNull), not(c, scalar), or(c, not(c, same(TAG.list)), lists.err));
    return { err, val };
  }

  private listEquality(l: Sym, r: Sym): { err: B; val: B } {
    const c = this.c;
    if (l.elements !== undefined && r.elements !== undefined) {
      if (l.elements.length !== r.elements.length) return { err: c.Bool.val(false), val: c.Bool.val(false) };
      const pairs = l.elements.map((x, i) => this.equality(x, r.elements![i]!));
      return { err: or(c, c.Bool.val(false), ...pairs.map((p) => p.err)), val: and(c, c.Bool.val(true), ...pairs.map((p) => p.val)) };
    }
    for (const side of [l, r]) {
      if (side.elements !== undefined && side.literal === undefined)
        throw new Unsupported("a list from `args` compared with a list literal that is not constant");
    }
    const f = functions(this);
    return { err: f.listEqErr.call(l.ref, r.ref), val: f.listEqVal.call(l.ref, r.ref) };
  }

  /**
   * `needle in [e1, e2, …]`: a list literal holds one type, so a null needle is never found, a needle
   * of that type is found by any equal element (kept flat, so a long list stays a shallow formula),
   * and a needle of another type fails at the first element.
   */
  private literalMembership(needle: Sym, elements: readonly Sym[]): { err: B; val: B } {
    const c = this.c;
    if (elements.length === 0) return { err: c.Bool.val(false), val: c.Bool.val(false) };
    const first = elements[0]!;
    if (!c.isIntVal(first.tag) || elements.some((e) => !c.isIntVal(e.tag) || e.elements !== undefined)) {
      throw new Unsupported("a list literal whose elements are not of one scalar type");
    }
    const tag = Number(first.tag.value());
    const payload = (s: Sym) => (tag === TAG.int ? s.int : tag === TAG.string ? s.str : s.bool) as Arith<"main">;
    const same = tagIs(c, needle.tag, tag);
    return {
      err: and(c, not(c, tagIs(c, needle.tag, TAG.null)), not(c, same)),
      val: and(c, same, or(c, ...elements.map((e) => payload(needle).eq(payload(e))))),
    };
  }

  /** `needle in list`: a literal list is a chain of equalities left to right; a list from `args` is left to the solver. */
  private membership(needle: Sym, list: Sym): { err: B; val: B } {
    const c = this.c;
    if (list.elements !== undefined) return this.literalMembership(needle, list.elements);
    const f = functions(this);
    const key = [needle.tag, needle.int, needle.str, needle.bool, needle.ref, list.ref] as const;
    return {
      err: or(c, not(c, tagIs(c, list.tag, TAG.list)), f.memberErr.call(...key)),
      val: f.memberVal.call(...key),
    };
  }
}

/** The uninterpreted functions of one encoder (see functions.ts). */
function functions(encoder: Encoder): SharedFunctions {
  return sharedFunctions(encoder.c);
}
