// Evaluation keeps no state between calls: its failure is a returned value, its meter an argument, its types the check's own.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { environment, SAMPLE_ENVIRONMENT, typedExprs } from "../test-support/arbitraries.js";
import type { Expr } from "./ast.js";
import { checkPolicy } from "./check.js";
import { compileChecked, compileExpr } from "./compile.js";
import { parsePolicy } from "./parse.js";
import { compileResidual, unmeteredRun } from "./residual.js";
import { TYPES, listOf, sameType, typeName } from "./types.js";
import { Failure, type Meter, NEVER_CHARGED } from "./values.js";

function checked(text: string): { ast: Expr; types: ReturnType<typeof checkPolicy>["types"] } {
  const parsed = parsePolicy(text);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.diagnostics));
  const result = checkPolicy(parsed.ast);
  expect(result.diagnostics).toEqual([]);
  return { ast: parsed.ast, types: result.types };
}

const meter = (limit = 1_000_000): Meter => ({ spent: 0, limit });

describe("evaluation without module state", () => {
  it("returns a frozen failure, and a later failure does not change an earlier one", () => {
    const first = checked("args.n > 1");
    const second = checked('lower(args.s) == "x"');
    const a = compileExpr(first.ast, first.types)({ ...SAMPLE_ENVIRONMENT, args: { n: "x" } }, meter());
    const b = compileExpr(second.ast, second.types)({ ...SAMPLE_ENVIRONMENT, args: { s: 3 } }, meter());
    expect(a).toBeInstanceOf(Failure);
    expect(b).toBeInstanceOf(Failure);
    expect(Object.isFrozen(a)).toBe(true);
    expect((a as Failure).diagnostic).toMatchObject({ code: "runtime-type", message: "cannot order `string` and `int`" });
    expect((b as Failure).diagnostic).toMatchObject({ code: "runtime-type", message: "`lower` takes a string, not `int`" });
    // A success in between returns its value, and leaves both failures as they were.
    expect(compileExpr(first.ast, first.types)({ ...SAMPLE_ENVIRONMENT, args: { n: 2 } }, meter())).toBe(true);
    expect((a as Failure).diagnostic.message).toBe("cannot order `string` and `int`");
  });

  it("charges the meter it is given, and fails at that meter's limit", () => {
    const { ast, types } = checked("args.l == args.m");
    const l = Array.from({ length: 100 }, (_, i) => i);
    const env = { ...SAMPLE_ENVIRONMENT, args: { l, m: [...l] } };
    const wide = meter();
    expect(compileExpr(ast, types)(env, wide)).toBe(true);
    expect(wide.spent).toBeGreaterThan(100);
    const narrow = meter(50);
    const over = compileExpr(ast, types)(env, narrow);
    expect(over).toBeInstanceOf(Failure);
    expect((over as Failure).diagnostic).toMatchObject({
      code: "cost-exceeded",
      message: "evaluation used more than its budget of 50 work units",
    });
    // Each meter counts its own evaluation only.
    expect(narrow.spent).toBeLessThan(wide.spent);
  });

  it("a tree that cannot fail never charges its meter, so it may be given the frozen one (INVARIANT (charging-can-fail))", () => {
    let safe = 0;
    fc.assert(
      fc.property(typedExprs.b, fc.array(environment, { minLength: 1, maxLength: 4 }), (ast, envs) => {
        const { types, diagnostics } = checkPolicy(ast);
        if (diagnostics.length > 0) return;
        const root = compileChecked(ast, types);
        if (root.canFail) return;
        safe++;
        for (const env of envs) {
          const counted = meter();
          const expected = root.fn(env, counted);
          expect(counted.spent).toBe(0);
          // A charge to the frozen meter would throw.
          expect(root.fn(env, NEVER_CHARGED)).toEqual(expected);
        }
      }),
      { numRuns: 400 },
    );
    expect(safe).toBeGreaterThan(20);
  });

  it("keeps the first run-time error of a partial evaluation in its own run", () => {
    const { ast, types } = checked("approver == args.a || approver == args.b");
    const run = unmeteredRun();
    const formula = compileResidual(ast, (e) => compileExpr(e, types))({ ...SAMPLE_ENVIRONMENT, args: { a: 1, b: true } }, run);
    expect(formula).toMatchObject({ k: "error" });
    expect(run.error).toMatchObject({ code: "runtime-type", message: "cannot compare `string` with `int`" });
    expect(unmeteredRun().error).toBeUndefined();
  });

  it("types belong to the check: the tree is not written to, and two checks give two tables", () => {
    const parsed = parsePolicy('tool in ["a", "b"] && size(args.l) > 1');
    if (!parsed.ok) throw new Error("must parse");
    const before = JSON.stringify(parsed.ast);
    const one = checkPolicy(parsed.ast);
    const two = checkPolicy(parsed.ast);
    expect(JSON.stringify(parsed.ast)).toBe(before);
    expect(Object.keys(parsed.ast)).not.toContain("checkedType");
    expect(one.types).not.toBe(two.types);
    expect(one.types.get(parsed.ast)).toBe(TYPES.bool);
  });
});

describe("structured types", () => {
  it("a list literal's type holds its element's type, and the empty list's holds none", () => {
    const parsed = parsePolicy('["a"] == [] && [1, 2] != [3]');
    if (!parsed.ok) throw new Error("must parse");
    const { types } = checkPolicy(parsed.ast);
    const lists: Expr[] = [];
    const visit = (e: Expr): void => {
      if (e.kind === "list") lists.push(e);
      if (e.kind === "binary") {
        visit(e.left);
        visit(e.right);
      }
    };
    visit(parsed.ast);
    expect(lists.map((e) => types.get(e))).toEqual([
      { kind: "list", element: { kind: "string" } },
      { kind: "list", element: null },
      { kind: "list", element: { kind: "int" } },
      { kind: "list", element: { kind: "int" } },
    ]);
    expect(lists.map((e) => typeName(types.get(e)!))).toEqual(["list of string", "empty list", "list of int", "list of int"]);
  });

  it("compares types by structure, and refuses to mix element types with the same messages as before", () => {
    expect(sameType(listOf(TYPES.int), { kind: "list", element: { kind: "int" } })).toBe(true);
    expect(sameType(listOf(TYPES.int), listOf(TYPES.string))).toBe(false);
    expect(sameType(listOf(null), listOf(TYPES.int))).toBe(false);
    const parsed = parsePolicy('tool in [1, 2] || [1] == ["a"]');
    if (!parsed.ok) throw new Error("must parse");
    expect(checkPolicy(parsed.ast).diagnostics.map((d) => d.message)).toEqual([
      "cannot look for `string` in `list of int`",
      "cannot compare `list of int` with `list of string`",
    ]);
  });
});
