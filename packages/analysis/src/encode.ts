// A checked policy as a formula: each node's value and whether evaluating it fails, exactly as the evaluator runs it.
import type { Arith, Bool, Context } from "z3-solver";
import { formatExpr, LIMITS, type Expr } from "@agent-authority/language";
import { constant, type EnvName, type Inputs, safe, type Sym, TAG } from "./inputs.js";
import { stringTerm, Unsupported } from "./strings.js";
import { callFunction, sharedFunctions, type SharedFunctions } from "./functions.js";

type B = Bool<"main">;
type BinaryExpr = Extract<Expr, { kind: "binary" }>;

/** Encodes policies over one set of inputs; the functions it leaves uninterpreted are shared, so two policies agree on them. */
export class Encoder {
  readonly c: Context<"main">;
  private readonly literals = new Map<string, number>();

  constructor(readonly inputs: Inputs) {
    this.c = inputs.ctx;
  }

  /** Whether the policy allows: it evaluates, without a run-time error, to `true`. */
  allows(root: Expr): B {
    const v = this.expr(root);
    return this.c.And(v.ok, v.tag.eq(TAG.bool), v.bool);
  }

  /** Whether the policy allows, and whether it evaluates without a run-time error. */
  outcome(root: Expr): { allows: B; ok: B } {
    const v = this.expr(root);
    return { allows: this.c.And(v.ok, v.tag.eq(TAG.bool), v.bool), ok: v.ok };
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
    return { ...constant(this.c, TAG.int), ok: this.c.And(ok, safe(this.c, value)), int: value };
  }

  private list(e: Extract<Expr, { kind: "list" }>): Sym {
    const elements = e.elements.map((x) => this.expr(x));
    const constant_ = e.elements.every((x) => x.kind === "int" || x.kind === "string" || x.kind === "bool");
    const literal = constant_ ? formatExpr(e) : undefined;
    const ref = literal === undefined ? -1 : this.literalId(literal);
    return {
      ...constant(this.c, TAG.list),
      ok: this.c.And(...elements.map((x) => x.ok)),
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
    if (op === "!") return this.boolean(c.And(v.ok, v.tag.eq(TAG.bool)), c.Not(v.bool));
    return this.integer(c.And(v.ok, v.tag.eq(TAG.int)), v.int.neg());
  }

  private binary(e: BinaryExpr): Sym {
    if (e.op === "&&" || e.op === "||") return this.chain(e.op, this.operands(e));
    const l = this.expr(e.left);
    const r = this.expr(e.right);
    const c = this.c;
    const both = c.And(l.ok, r.ok);
    switch (e.op) {
      case "+":
      case "-":
      case "*": {
        const ints = c.And(both, l.tag.eq(TAG.int), r.tag.eq(TAG.int));
        return this.integer(ints, e.op === "+" ? l.int.add(r.int) : e.op === "-" ? l.int.sub(r.int) : l.int.mul(r.int));
      }
      case "==":
      case "!=": {
        const eq = this.equality(l, r);
        return this.boolean(c.And(both, c.Not(eq.err)), e.op === "==" ? eq.val : c.Not(eq.val));
      }
      case "in": {
        const m = this.membership(l, r);
        return this.boolean(c.And(both, c.Not(m.err)), m.val);
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

  /** `&&` and `||`, left to right: the first operand that decides stops, a failure or non-condition before it fails. */
  private chain(op: "&&" | "||", operands: readonly Expr[]): Sym {
    const c = this.c;
    const isAnd = op === "&&";
    let ok: B = c.Bool.val(true);
    let val: B = c.Bool.val(isAnd);
    for (let i = operands.length - 1; i >= 0; i--) {
      const v = this.expr(operands[i]!);
      const isBool = c.And(v.ok, v.tag.eq(TAG.bool));
      const decides = isAnd ? c.Not(v.bool) : v.bool;
      ok = c.And(isBool, c.Or(decides, ok));
      val = isAnd ? c.And(v.bool, val) : c.Or(v.bool, val);
    }
    return this.boolean(ok, val);
  }

  private ordering(op: string, l: Sym, r: Sym): Sym {
    const c = this.c;
    const ints = c.And(l.tag.eq(TAG.int), r.tag.eq(TAG.int));
    const strings = c.And(l.tag.eq(TAG.string), r.tag.eq(TAG.string));
    const ok = c.And(l.ok, r.ok, c.Or(ints, strings));
    const [a, b, strict] = op === "<" ? [l, r, true] : op === "<=" ? [l, r, false] : op === ">" ? [r, l, true] : [r, l, false];
    const intTest = strict ? a.int.lt(b.int) : a.int.le(b.int);
    const strTest = strict ? a.str.lt(b.str) : a.str.le(b.str);
    return this.boolean(ok, c.If(ints, intTest, strTest));
  }

  /** Equality of two evaluated values: null equals only null, one scalar type compares, lists element by element, the rest fails. */
  equality(l: Sym, r: Sym): { err: B; val: B } {
    const c = this.c;
    const eitherNull = c.Or(l.tag.eq(TAG.null), r.tag.eq(TAG.null));
    const bothNull = c.And(l.tag.eq(TAG.null), r.tag.eq(TAG.null));
    const same = (tag: number): B => c.And(l.tag.eq(tag), r.tag.eq(tag));
    const lists = this.listEquality(l, r);
    const scalar = c.Or(same(TAG.int), same(TAG.string), same(TAG.bool));
    const val = c.If(
      eitherNull,
      bothNull,
      c.If(same(TAG.int), l.int.eq(r.int), c.If(same(TAG.string), l.str.eq(r.str), c.If(same(TAG.bool), l.bool.eq(r.bool), lists.val))),
    );
    const err = c.And(c.Not(eitherNull), c.Not(scalar), c.Or(c.Not(same(TAG.list)), lists.err));
    return { err, val };
  }

  private listEquality(l: Sym, r: Sym): { err: B; val: B } {
    const c = this.c;
    if (l.elements !== undefined && r.elements !== undefined) {
      if (l.elements.length !== r.elements.length) return { err: c.Bool.val(false), val: c.Bool.val(false) };
      const pairs = l.elements.map((x, i) => this.equality(x, r.elements![i]!));
      return { err: c.Or(c.Bool.val(false), ...pairs.map((p) => p.err)), val: c.And(c.Bool.val(true), ...pairs.map((p) => p.val)) };
    }
    for (const side of [l, r]) {
      if (side.elements !== undefined && side.literal === undefined)
        throw new Unsupported("a list from `args` compared with a list literal that is not constant");
    }
    const f = functions(this);
    return { err: f.listEqErr.call(l.ref, r.ref), val: f.listEqVal.call(l.ref, r.ref) };
  }

  /** `needle in list`: a literal list is a chain of equalities left to right; a list from `args` is left to the solver. */
  private membership(needle: Sym, list: Sym): { err: B; val: B } {
    const c = this.c;
    if (list.elements !== undefined) {
      let err: B = c.Bool.val(false);
      let val: B = c.Bool.val(false);
      for (let i = list.elements.length - 1; i >= 0; i--) {
        const eq = this.equality(needle, list.elements[i]!);
        err = c.If(eq.err, c.Bool.val(true), c.If(eq.val, c.Bool.val(false), err));
        val = c.If(eq.err, c.Bool.val(false), c.If(eq.val, c.Bool.val(true), val));
      }
      return { err, val };
    }
    const f = functions(this);
    const key = [needle.tag, needle.int, needle.str, needle.bool, needle.ref, list.ref] as const;
    return {
      err: c.Or(list.tag.neq(TAG.list), f.memberErr.call(...key)),
      val: f.memberVal.call(...key),
    };
  }
}

/** The uninterpreted functions of one encoder (see functions.ts). */
function functions(encoder: Encoder): SharedFunctions {
  return sharedFunctions(encoder.c);
}
