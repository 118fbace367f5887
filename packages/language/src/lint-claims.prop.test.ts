// Issue 50: every claim lint makes is true of the evaluator. A condition said to be constant has that
// value whenever it does not fail, one said never to hold never holds, a redundant alternative
// changes nothing when replaced by `false` (or by `true` too, when it is never evaluated), and a policy that never allows never holds.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { environment, typedExprs } from "../test-support/arbitraries.js";
import type { Diagnostic } from "./diagnostic.js";
import { formatExpr } from "./format.js";
import { compilePolicy, lintPolicy, type PolicyEnvironment } from "./index.js";

const params = (runs: number): fc.Parameters<unknown> => ({ numRuns: runs, seed: Number(process.env["FC_SEED"] ?? 20261128) });

/** The value of `text` as a policy of its own, or `error` when it fails at run time. */
function evaluated(text: string, env: PolicyEnvironment): boolean | "error" {
  const compiled = compilePolicy(text, { origin: "stored" });
  if (!compiled.ok) throw new Error(`a part of a policy that compiles must compile: ${text}`);
  const value = compiled.policy.evaluate(env);
  return value.ok ? value.value === true : "error";
}

/** Checks one claim of lint on `text` against the evaluator in `env`. */
function checkClaim(text: string, w: Diagnostic, env: PolicyEnvironment): void {
  const part = text.slice(w.span.start, w.span.end);
  const claim = `${w.code} \`${part}\` in \`${text}\`: ${w.message}`;
  if (w.code === "constant-condition") {
    const value = evaluated(part, env);
    if (/always holds$/.test(w.message)) expect(value, claim).toBe(true);
    else if (/always `true`$/.test(w.message)) expect([true, "error"], claim).toContain(value);
    else if (/always `false`$/.test(w.message)) expect([false, "error"], claim).toContain(value);
    else if (/always fails at run time$/.test(w.message)) expect(value, claim).toBe("error");
  } else if (w.code === "impossible-comparison") {
    // A comparison claimed never to hold; a weekday list names one element only, which no claim of truth is made about.
    if (/can never hold$/.test(w.message)) expect(evaluated(part, env), claim).not.toBe(true);
  } else if (w.code === "redundant-disjunct") {
    // An alternative never evaluated may be anything; one that never holds may be `false`.
    const whole = evaluated(text, env);
    const never = /it never holds$/.test(w.message);
    if (never) expect(evaluated(part, env), claim).not.toBe(true);
    for (const replacement of never ? ["false"] : ["true", "false"]) {
      expect(evaluated(`${text.slice(0, w.span.start)}(${replacement})${text.slice(w.span.end)}`, env), claim).toBe(whole);
    }
  } else if (w.code === "never-allows") {
    expect(evaluated(text, env), claim).not.toBe(true);
  }
}

describe("every claim lint makes holds in the evaluator", () => {
  it("constant, impossible, redundant and never-allows claims agree with evaluation on random actions", () => {
    fc.assert(
      fc.property(
        typedExprs.b,
        fc.array(environment, { minLength: 1, maxLength: 4 }),
        fc.constantFrom(null, "a", "ab"),
        (tree, envs, approver) => {
          const text = formatExpr(tree);
          const warnings = lintPolicy(text).filter((d) => d.severity === "warning");
          for (const env of envs) for (const w of warnings) checkClaim(text, w, { ...env, approver } as PolicyEnvironment);
        },
      ),
      params(3000),
    );
  });

  // Shrunk counterexamples, kept.
  it("`size([]) <= -spent_minor` is no constant: it is false whenever `spent_minor` is above 0 (issue 50)", () => {
    expect(lintPolicy("size([]) <= -spent_minor").map((d) => d.code)).not.toContain("constant-condition");
    expect(lintPolicy("size([]) <= -spent_minor && uses < 3").map((d) => d.code)).not.toContain("constant-condition");
  });
});
