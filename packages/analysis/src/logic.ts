// Connectives that fold what is already known (a literal true or false, a run-time type fixed by the text), so formulas stay small and shallow.
import type { Arith, Bool, Context, Expr } from "z3-solver";

type B = Bool<"main">;

export function and(c: Context<"main">, ...xs: B[]): B {
  const kept: B[] = [];
  for (const x of xs) {
    if (c.isFalse(x)) return c.Bool.val(false);
    if (!c.isTrue(x)) kept.push(x);
  }
  return kept.length === 0 ? c.Bool.val(true) : kept.length === 1 ? kept[0]! : c.And(...kept);
}

export function or(c: Context<"main">, ...xs: B[]): B {
  const kept: B[] = [];
  for (const x of xs) {
    if (c.isTrue(x)) return c.Bool.val(true);
    if (!c.isFalse(x)) kept.push(x);
  }
  return kept.length === 0 ? c.Bool.val(false) : kept.length === 1 ? kept[0]! : c.Or(...kept);
}

export function not(c: Context<"main">, x: B): B {
  return c.isTrue(x) ? c.Bool.val(false) : c.isFalse(x) ? c.Bool.val(true) : c.Not(x);
}

export function ite<T extends Expr<"main">>(c: Context<"main">, cond: B, a: T, b: T): T {
  if (c.isTrue(cond)) return a;
  if (c.isFalse(cond)) return b;
  return c.If(cond, a, b) as unknown as T;
}

/** Whether a run-time type (a tag) is `tag`: a literal when the tag is fixed by the text. */
export function tagIs(c: Context<"main">, t: Arith<"main">, tag: number): B {
  if (c.isIntVal(t)) return c.Bool.val(Number(t.value()) === tag);
  return t.eq(tag);
}
