// Property tests over hostile input (issue 23): nothing throws on any text up to the size limit,
// the work done stays bounded by the text's size, and the formatter never breaks a policy. Work is
// counted in nodes, levels and bytes, never in time.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { environment, SAMPLE_ENVIRONMENT, typedExprs } from "../test-support/arbitraries.js";
import { formattableText, hostileArgs, hostileText } from "../test-support/hostile.js";
import { childrenOf, equivalentTrees, nodeDeeperThan, type Expr } from "./ast.js";
import { DIAGNOSTIC_CODES, type Diagnostic } from "./diagnostic.js";
import { formatExpr } from "./format.js";
import { compilePolicy, formatPolicy, lintPolicy, type EvaluationResult, type PolicyEnvironment } from "./index.js";
import { LIMITS, utf8Length } from "./limits.js";
import { parsePolicy } from "./parse.js";

// A fixed seed, replayable with FC_SEED=<n>; a shrunk counterexample becomes a vector in
// test/conformance/language/hostile.json.
const params = (runs: number): fc.Parameters<unknown> => ({ numRuns: runs, seed: Number(process.env["FC_SEED"] ?? 20261125) });

const BASE: PolicyEnvironment = SAMPLE_ENVIRONMENT;

const KNOWN_CODES = new Set<string>(DIAGNOSTIC_CODES);

/** A diagnostic is a value with a known code and a span inside the text. */
function expectWellFormed(diagnostics: readonly Diagnostic[], text: string): void {
  for (const d of diagnostics) {
    expect(KNOWN_CODES.has(d.code), d.code).toBe(true);
    expect(d.span.start).toBeGreaterThanOrEqual(0);
    expect(d.span.end).toBeGreaterThanOrEqual(d.span.start);
    expect(d.span.end).toBeLessThanOrEqual(text.length);
  }
}

/** The number of nodes of a tree, counted with an explicit stack. */
function nodeCount(root: Expr): number {
  let count = 0;
  const stack: Expr[] = [root];
  while (stack.length > 0) {
    count++;
    stack.push(...childrenOf(stack.pop()!));
  }
  return count;
}

function expectEvaluation(result: EvaluationResult): void {
  if (result.ok) expect(typeof result.value).toBe("boolean");
  else expect(KNOWN_CODES.has(result.error.code), result.error.code).toBe(true);
}

describe("hostile text", () => {
  it("never makes parse, check, compile, evaluate, decide, format or lint throw, and the work stays bounded by the text", () => {
    fc.assert(
      fc.property(hostileText, hostileArgs, (text, args) => {
        const parsed = parsePolicy(text);
        if (parsed.ok) {
          // Every node stands for at least one byte of text, and no tree is deeper than the limit.
          expect(nodeCount(parsed.ast)).toBeLessThanOrEqual(utf8Length(text));
          expect(nodeDeeperThan(parsed.ast, LIMITS.expressionDepthMax)).toBeUndefined();
        } else expectWellFormed(parsed.diagnostics, text);
        const compiled = compilePolicy(text);
        if (!compiled.ok) {
          expect(compiled.diagnostics.length).toBeGreaterThan(0);
          expectWellFormed(compiled.diagnostics, text);
        } else {
          const env = { ...BASE, args };
          expectEvaluation(compiled.policy.evaluate(env));
          expectEvaluation(compiled.policy.evaluate({ ...env, approver: "a" }));
          expect(["allow", "deny", "gated"]).toContain(compiled.policy.decide(env).outcome);
          expectWellFormed(compiled.warnings, text);
        }
        expectWellFormed(lintPolicy(text), text);
        const formatted = formatPolicy(text);
        if (formatted.ok) expect(utf8Length(formatted.text)).toBeLessThanOrEqual(LIMITS.policyBytesMax);
        else expectWellFormed(formatted.diagnostics, text);
      }),
      params(400),
    );
  });

  it("never gives a policy object, so never an allow, for text with errors", () => {
    fc.assert(
      fc.property(hostileText, (text) => {
        const compiled = compilePolicy(text);
        const errors = compiled.ok ? [] : compiled.diagnostics.filter((d) => d.severity === "error");
        expect(compiled.ok).toBe(errors.length === 0);
        expect("policy" in compiled).toBe(compiled.ok);
      }),
      params(400),
    );
  });
});

/** Evaluation results compared by value, or by error code (spans move when the text is respaced). */
function observed(result: EvaluationResult): unknown {
  return result.ok ? result.value : result.error.code;
}

describe("the formatter never breaks a policy", () => {
  const generated = fc.oneof(formattableText, typedExprs.b.map(formatExpr));

  it("either refuses, or prints text within every limit that parses to the same tree, idempotently", () => {
    fc.assert(
      fc.property(generated, (text) => {
        const original = parsePolicy(text);
        const formatted = formatPolicy(text);
        if (!original.ok) {
          expect(formatted.ok).toBe(false);
          return;
        }
        if (!formatted.ok) {
          expect(formatted.diagnostics.map((d) => d.code)).toEqual(
            expect.arrayContaining([expect.stringMatching(/^(policy-too-long|nesting-too-deep)$/)]),
          );
          return;
        }
        expect(utf8Length(formatted.text)).toBeLessThanOrEqual(LIMITS.policyBytesMax);
        const again = parsePolicy(formatted.text);
        expect(again.ok).toBe(true);
        if (again.ok) expect(equivalentTrees(original.ast, again.ast)).toBe(true);
        expect(formatPolicy(formatted.text)).toEqual(formatted);
      }),
      params(500),
    );
  });

  it("compiles to a policy that evaluates and decides the same on random environments", () => {
    fc.assert(
      fc.property(generated, fc.array(environment, { minLength: 1, maxLength: 4 }), (text, envs) => {
        const before = compilePolicy(text);
        const formatted = formatPolicy(text);
        if (!before.ok || !formatted.ok) return;
        const after = compilePolicy(formatted.text);
        expect(after.ok).toBe(true);
        if (!after.ok) return;
        for (const env of envs) {
          const full = { ...env, approver: null } as PolicyEnvironment;
          expect(observed(after.policy.evaluate(full))).toEqual(observed(before.policy.evaluate(full)));
          expect(observed(after.policy.evaluate({ ...full, approver: "a" }))).toEqual(
            observed(before.policy.evaluate({ ...full, approver: "a" })),
          );
          const [x, y] = [before.policy.decide(full), after.policy.decide(full)];
          expect(y.outcome).toBe(x.outcome);
        }
      }),
      params(500),
    );
  });
});
