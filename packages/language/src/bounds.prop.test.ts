// Property tests of the bounds: residuals against a brute-force oracle and within their size, and
// every lint claim against an evaluating oracle over random actions. They count sizes, never time.
import type { Span } from "@agent-authority/grammar";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { approverEnvironment, environment, typedExprs } from "../test-support/arbitraries.js";
import { approverChains, lintShapes } from "../test-support/hostile-bounds.js";
import { referenceEvaluate } from "../test-support/reference.js";
import { childrenOf, mapChildren, type Expr } from "./ast.js";
import { approverCost } from "./approver-cost.js";
import { checkPolicy } from "./check.js";
import { compileExpr } from "./compile.js";
import { formatExpr } from "./format.js";
import { compileResidual, formulaSize, unmeteredRun } from "./residual.js";
import { LIMITS, utf8Length } from "./limits.js";
import { parsePolicy } from "./parse.js";
import { compilePolicy } from "./policy.js";

const RUNS = 1000;
const params = (runs = RUNS): fc.Parameters<unknown> => ({ numRuns: runs, seed: Number(process.env["FC_SEED"] ?? 20261125) });

type Env = Record<string, unknown>;

/** Whether the reference interpreter finds `e` true on `env`. */
const isTrue = (e: Expr, env: Env): boolean => {
  const r = referenceEvaluate(e, env);
  return r.ok && r.value === true;
};

/** The string literals of a tree. */
function literals(e: Expr, out: Set<string> = new Set()): Set<string> {
  if (e.kind === "string") out.add(e.value);
  for (const x of childrenOf(e)) literals(x, out);
  return out;
}

describe("partial evaluation on hostile chains", () => {
  it("agrees with a brute-force oracle over null, the policy's literals and a fresh string, within its bound and its search limits", () => {
    let gated = 0;
    fc.assert(
      fc.property(approverChains, approverEnvironment, (tree, env) => {
        const text = formatExpr(tree);
        const compiled = compilePolicy(text);
        if (!compiled.ok) {
          // Only the limits may refuse a generated chain: nesting, size, or the approver search.
          expect(
            compiled.diagnostics
              .map((d) => d.code)
              .every((c) => c === "nesting-too-deep" || c === "policy-too-long" || c === "approver-search-too-large"),
            text,
          ).toBe(true);
          return;
        }
        const parsed = parsePolicy(text);
        if (!parsed.ok) throw new Error("compiled text must parse");
        const cost = approverCost(parsed.ast);
        expect(cost.steps).toBeLessThanOrEqual(LIMITS.approverSearchStepsMax);
        // The residual has no more nodes than the cost counted, so the search is never cut short.
        const types = checkPolicy(parsed.ast).types;
        const residual0 = compileResidual(parsed.ast, (e) => compileExpr(e, types))(env as never, unmeteredRun());
        expect(formulaSize(residual0)).toBeLessThanOrEqual(Math.max(1, cost.residualNodes));
        const approvers = [...literals(parsed.ast), "\ue777fresh", "z"];
        const truths = approvers.map((approver) => isTrue(parsed.ast, { ...env, approver }));
        const withNull = isTrue(parsed.ast, { ...env, approver: null });
        const decision = compiled.policy.decide(env as never);
        if (decision.outcome === "allow") expect(withNull && truths.every(Boolean), text).toBe(true);
        if (decision.outcome === "deny") expect(truths.some(Boolean), text).toBe(false);
        if (decision.outcome !== "gated") return;
        gated++;
        // The bound: these chains state no value in place of an expression, so the residual is never longer than the policy.
        expect(utf8Length(decision.residual)).toBeLessThanOrEqual(utf8Length(compiled.policy.text));
        const residual = compilePolicy(decision.residual);
        if (!residual.ok) throw new Error(`residual must compile: ${decision.residual}`);
        approvers.forEach((approver, i) => {
          const part = residual.policy.evaluate({ ...env, approver } as never);
          expect(part.ok && part.value, `${text} / ${decision.residual} / ${approver}`).toBe(truths[i]);
        });
      }),
      params(),
    );
    expect(gated).toBeGreaterThan(RUNS / 10);
  });
});

/** Every node of `root` whose span is `span`, outermost first. */
function nodesAt(root: Expr, span: Span): Expr[] {
  const out: Expr[] = [];
  const visit = (e: Expr): void => {
    if (e.span.start === span.start && e.span.end === span.end) out.push(e);
    childrenOf(e).forEach(visit);
  };
  visit(root);
  return out;
}

/** `root` with the node `target` replaced by `false`. */
function withoutNode(root: Expr, target: Expr): Expr {
  return root === target ? { kind: "bool", value: false, span: root.span } : mapChildren(root, (x) => withoutNode(x, target));
}

const sameResult = (a: ReturnType<typeof referenceEvaluate>, b: ReturnType<typeof referenceEvaluate>): boolean =>
  a.ok ? b.ok && a.value === b.value : !b.ok && a.code === b.code;

/** Checks one warning on one action; answers a description of the counterexample, or undefined. */
function refutes(root: Expr, w: { code: string; message: string; span: Span }, env: Env): string | undefined {
  const node = nodesAt(root, w.span).find((n) => n.kind !== "string") ?? nodesAt(root, w.span)[0];
  if (node === undefined) return `no node at ${JSON.stringify(w.span)}`;
  const value = referenceEvaluate(node, env);
  switch (w.code) {
    case "constant-condition": {
      if (w.message.includes("always fails")) return value.ok ? "evaluated" : undefined;
      const claimed = !w.message.includes("always `false`");
      return value.ok && value.value === claimed ? undefined : `is ${JSON.stringify(value)}`;
    }
    case "impossible-comparison":
    case "approver-unsatisfiable":
      // (A weekday list entry is a claim about the entry, not a condition.)
      if (node.kind === "string") return undefined;
      return isTrue(node, env) ? "holds" : undefined;
    case "never-allows":
      return isTrue(root, env) ? "allows" : undefined;
    case "redundant-disjunct":
      return sameResult(referenceEvaluate(root, env), referenceEvaluate(withoutNode(root, node), env))
        ? undefined
        : "removing it changes the outcome";
    default:
      return undefined;
  }
}

describe("lint is sound under the null and error rules", () => {
  it("every claim (constant, redundant disjunct, never allows, never holds) holds on every sampled action", () => {
    let claims = 0;
    const approver = fc.constantFrom(null, "a", "", "x@example.com");
    const actions = fc.array(fc.tuple(environment, approver), { minLength: 8, maxLength: 8 });
    fc.assert(
      fc.property(fc.oneof(lintShapes, typedExprs.b), actions, (tree, envs) => {
        const text = formatExpr(tree);
        const compiled = compilePolicy(text);
        if (!compiled.ok) return;
        const parsed = parsePolicy(text);
        if (!parsed.ok) throw new Error("compiled text must parse");
        for (const w of compiled.warnings) {
          claims++;
          for (const [env, who] of envs) {
            const problem = refutes(parsed.ast, w, { ...env, approver: who });
            expect(problem, `${text}: ${w.code} ${w.message} on ${JSON.stringify({ ...env, approver: who })}`).toBeUndefined();
          }
        }
      }),
      params(),
    );
    expect(claims).toBeGreaterThan(RUNS / 2);
  });
});
