// Laws of the semantic diff over the language's own random policies: `equivalent` agrees with both evaluators on 10,000 random inputs, and every witness disagrees as claimed.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compilePolicy, type Expr, formatExpr, type PolicyEnvironment } from "@agent-authority/language";
import { environment, typedExprs } from "../../language/test-support/arbitraries.js";
import { referenceEvaluate } from "../../language/test-support/reference.js";
import { createAnalyzer, diffPolicies, type Analyzer, type DiffResult } from "./index.js";

let analyzer: Analyzer;
beforeAll(async () => {
  analyzer = await createAnalyzer();
});
afterAll(async () => {
  await analyzer.close();
});

const S = { start: 0, end: 0 };
const not = (operand: Expr): Expr => ({ kind: "unary", op: "!", operand, span: S });

/** A rewrite that keeps a policy's meaning, errors included: double negation, De Morgan, a comparison turned round. */
function rewrite(e: Expr, how: number): Expr {
  if (e.kind === "binary" && (e.op === "&&" || e.op === "||") && how % 3 === 0)
    return not({ ...e, op: e.op === "&&" ? "||" : "&&", left: not(e.left), right: not(e.right) });
  if (e.kind === "binary" && (e.op === "==" || e.op === "!=") && how % 3 === 1) return { ...e, left: e.right, right: e.left };
  if (e.kind === "binary" && (e.op === "<" || e.op === ">") && how % 3 === 2)
    return { ...e, op: e.op === "<" ? ">" : "<", left: e.right, right: e.left };
  return not(not(e));
}

/** The policy's canonical text when it compiles. */
function valid(e: Expr): string | undefined {
  const text = formatExpr(e);
  const compiled = compilePolicy(text);
  return compiled.ok ? text : undefined;
}

/** The generator's trees that compile: every run of a law tests a pair. */
const validPolicies = typedExprs.b.filter((e) => valid(e) !== undefined);

const approvers = fc.constantFrom<string | null>(null, "a", "ab", "");
const inputs = fc.tuple(environment, approvers).map(([env, approver]) => ({ ...env, approver }) as PolicyEnvironment);

/** Whether both evaluators (the compiled one and the reference) allow `input`; they must agree. */
function allows(text: string, input: PolicyEnvironment): boolean {
  const compiled = compilePolicy(text);
  if (!compiled.ok) throw new Error("a valid policy");
  const a = compiled.policy.evaluate(input);
  const reparsed = compilePolicy(text);
  const ast = reparsed.ok ? (reparsed.policy as unknown as { ast: Expr }).ast : undefined;
  const b = referenceEvaluate(ast!, input as unknown as Record<string, unknown>);
  const viaCompiled = a.ok && a.value;
  expect(b.ok && b.value === true).toBe(viaCompiled);
  return viaCompiled;
}

function expectWitnessesHold(old: string, next: string, r: DiffResult): void {
  for (const d of [...r.widening, ...r.narrowing]) {
    expect(allows(old, d.input)).toBe(d.old);
    expect(allows(next, d.input)).toBe(d.new);
  }
}

describe("diff laws", () => {
  it("a rewrite is equivalent (or unknown), and `equivalent` agrees with both evaluators on 40 × 250 random inputs", async () => {
    let inputsChecked = 0;
    const relations: string[] = [];
    await fc.assert(
      fc.asyncProperty(validPolicies, fc.nat(), fc.integer(), async (e, how, seed) => {
        const old = valid(e);
        const next = old === undefined ? undefined : valid(rewrite(e, how));
        if (old === undefined || next === undefined) return;
        const r = await diffPolicies(analyzer, old, next);
        expectWitnessesHold(old, next, r);
        expect(["equivalent", "unknown"]).toContain(r.relation);
        relations.push(r.relation);
        if (r.relation !== "equivalent") return;
        for (const input of fc.sample(inputs, { numRuns: 250, seed })) {
          expect(allows(next, input)).toBe(allows(old, input));
          inputsChecked += 1;
        }
      }),
      { numRuns: 40 },
    );
    // The analysis proves most rewrites: an answer of `unknown` every time would make this law empty.
    expect(relations.filter((r) => r === "equivalent").length).toBeGreaterThan(relations.length / 2);
    expect(inputsChecked).toBe(250 * relations.filter((r) => r === "equivalent").length);
    expect(relations.length).toBe(40);
  });

  it("for two random policies every witness evaluates as claimed, and `equivalent` holds on random inputs", async () => {
    await fc.assert(
      fc.asyncProperty(validPolicies, validPolicies, fc.integer(), async (a, b, seed) => {
        const old = valid(a);
        const next = valid(b);
        if (old === undefined || next === undefined) return;
        const r = await diffPolicies(analyzer, old, next);
        expectWitnessesHold(old, next, r);
        if (r.relation === "widens") expect(r.narrowing).toEqual([]);
        if (r.relation === "equivalent")
          for (const input of fc.sample(inputs, { numRuns: 100, seed })) expect(allows(next, input)).toBe(allows(old, input));
      }),
      { numRuns: 40 },
    );
  });
});
