// Property tests: formatter round trip, compiled evaluator against the reference interpreter,
// decisions against a brute-force oracle, and no throwing on any input.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { anyExpr, approverEnvironment, approverExprs, approverUniverse, environment, typedExprs } from "../test-support/arbitraries.js";
import { oracleDecide, referenceEvaluate } from "../test-support/reference.js";
import { checkPolicy } from "./check.js";
import { formatExpr } from "./format.js";
import { parsePolicy } from "./parse.js";
import { parseCst } from "@agent-authority/grammar";
import { compilePolicy, conjoin, formatPolicy, lintPolicy, type PolicyEnvironment } from "./index.js";

// Every property runs 1,000 times from a fixed seed; FC_SEED=<n> replays another. A shrunk
// counterexample worth keeping becomes a vector under test/conformance/language/.
const RUNS = 1000;
const params = (runs = RUNS): fc.Parameters<unknown> => ({ numRuns: runs, seed: Number(process.env["FC_SEED"] ?? 20260522) });

describe("formatter", () => {
  it("format(parse(format(x))) == format(x) on generated trees", () => {
    fc.assert(
      fc.property(anyExpr, (tree) => {
        const text = formatExpr(tree);
        const parsed = parsePolicy(text, { skipTextLimit: true });
        if (!parsed.ok && parsed.diagnostics.some((d) => d.code === "nesting-too-deep")) return;
        expect(parsed.ok, JSON.stringify(parsed.ok ? "" : parsed.diagnostics)).toBe(true);
        if (parsed.ok) expect(formatExpr(parsed.ast)).toBe(text);
      }),
      params(),
    );
  });
});

/** `text` with each comment put after the token it names: trailing on the token's line, or on a line of its own. */
function withComments(text: string, inserts: readonly { after: number; body: string; ownLine: boolean }[]): string {
  const ends = parseCst(text).tokens.map((t) => t.startOffset + t.image.length);
  const at = new Map<number, string>();
  for (const insert of inserts) {
    const offset = ends[insert.after % ends.length]!;
    const comment = insert.ownLine ? `\n// ${insert.body}\n` : ` // ${insert.body}\n`;
    at.set(offset, (at.get(offset) ?? "") + comment);
  }
  let out = "";
  let from = 0;
  for (const offset of [...at.keys()].sort((a, b) => a - b)) {
    out += text.slice(from, offset) + at.get(offset)!;
    from = offset;
  }
  return out + text.slice(from);
}

const commentBody = fc.string({ maxLength: 12 }).map((s) => s.replace(/[\r\n]/g, " ").trim());

describe("formatter with comments", () => {
  it("keeps every comment, the same tree, and is idempotent", () => {
    fc.assert(
      fc.property(
        anyExpr,
        fc.array(fc.record({ after: fc.nat(), body: commentBody, ownLine: fc.boolean() }), { minLength: 1, maxLength: 4 }),
        (tree, inserts) => {
          const plain = formatExpr(tree);
          const text = withComments(plain, inserts);
          const parsed = parsePolicy(text);
          if (!parsed.ok) return;
          const formatted = formatPolicy(text);
          if (!formatted.ok) return;
          const again = parsePolicy(formatted.text);
          expect(again.ok).toBe(true);
          if (!again.ok) return;
          expect(formatExpr(again.ast)).toBe(formatExpr(parsed.ast));
          for (const insert of inserts) expect(formatted.text).toContain(`// ${insert.body}`.trimEnd());
          expect(formatPolicy(formatted.text)).toEqual({ ok: true, text: formatted.text });
        },
      ),
      params(),
    );
  });
});

describe("compiled evaluator", () => {
  it("agrees with the reference interpreter on random expressions and environments", () => {
    let checked = 0;
    fc.assert(
      fc.property(typedExprs.b, environment, fc.option(fc.constantFrom("a", "cfo@example.com")), (tree, env, approver) => {
        const text = formatExpr(tree);
        const compiled = compilePolicy(text);
        if (!compiled.ok) return;
        checked++;
        const parsed = parsePolicy(text);
        if (!parsed.ok) throw new Error("compiled text must parse");
        const full = { ...env, approver } as PolicyEnvironment;
        const expected = referenceEvaluate(parsed.ast, full as unknown as Record<string, unknown>);
        const actual = compiled.policy.evaluate(full);
        if (expected.ok) expect(actual).toEqual({ ok: true, value: expected.value });
        else
          expect(actual.ok ? actual : { code: actual.error.code, span: actual.error.span }).toEqual({
            code: expected.code,
            span: expected.span,
          });
      }),
      params(),
    );
    expect(checked).toBeGreaterThan(RUNS / 2);
  });
});

describe("partial evaluation", () => {
  it("allow / deny / gated agrees with a brute-force oracle over a finite approver universe", () => {
    fc.assert(
      fc.property(approverExprs, approverEnvironment, (tree, env) => {
        const text = formatExpr(tree);
        const compiled = compilePolicy(text);
        if (!compiled.ok) throw new Error(`generated policy must compile: ${text} ${JSON.stringify(compiled.diagnostics)}`);
        const parsed = parsePolicy(text);
        if (!parsed.ok) throw new Error("compiled text must parse");
        const decision = compiled.policy.decide(env);
        const expected = oracleDecide(parsed.ast, env as unknown as Record<string, unknown>, approverUniverse);
        expect(decision.outcome, text).toBe(expected);
        if (decision.outcome !== "gated") return;
        // The residual holds for exactly the approvers for which the whole policy holds.
        const residual = compilePolicy(decision.residual);
        if (!residual.ok) throw new Error(`residual must compile: ${decision.residual}`);
        for (const approver of approverUniverse) {
          const whole = referenceEvaluate(parsed.ast, { ...env, approver } as unknown as Record<string, unknown>);
          const part = residual.policy.evaluate({ ...env, approver } as PolicyEnvironment);
          expect(part.ok && part.value, `${text} / ${decision.residual} / ${approver}`).toBe(whole.ok && whole.value === true);
        }
      }),
      params(),
    );
  });
});

describe("lint", () => {
  it("never throws, and `never-allows` is sound: such a policy neither allows nor is gated, nor holds with any approval", () => {
    fc.assert(
      fc.property(fc.oneof(typedExprs.b, approverExprs), environment, fc.constantFrom("a", "b", "ab", ""), (tree, env, approver) => {
        const compiled = compilePolicy(formatExpr(tree));
        if (!compiled.ok) return;
        const warnings = compiled.warnings;
        if (!warnings.some((w) => w.code === "never-allows")) return;
        expect(compiled.policy.decide(env).outcome).toBe("deny");
        const value = compiled.policy.evaluate({ ...env, approver } as PolicyEnvironment);
        expect(value.ok && value.value).toBe(false);
      }),
      params(),
    );
  });
});

describe("conjoin", () => {
  it("a conjoined chain is decided as one expression, agreeing with the oracle on the conjunction", () => {
    fc.assert(
      fc.property(fc.array(approverExprs, { minLength: 2, maxLength: 3 }), approverEnvironment, (trees, env) => {
        const parts = trees.map((tree) => {
          const compiled = compilePolicy(formatExpr(tree));
          if (!compiled.ok) throw new Error(`generated policy must compile: ${formatExpr(tree)}`);
          return compiled.policy;
        });
        const chain = conjoin(parts);
        const parsed = parsePolicy(chain.text, { skipTextLimit: true });
        if (!parsed.ok) throw new Error(`conjunction must parse: ${chain.text}`);
        expect(chain.decide(env).outcome, chain.text).toBe(
          oracleDecide(parsed.ast, env as unknown as Record<string, unknown>, approverUniverse),
        );
      }),
      params(),
    );
  });
});

const tokenSoup = fc
  .array(
    fc.constantFrom(
      "amount_minor",
      "approver",
      "args",
      ".",
      "x",
      "(",
      ")",
      "[",
      "]",
      ",",
      "!",
      "-",
      "+",
      "*",
      "==",
      "!=",
      "<",
      ">=",
      "in",
      "&&",
      "||",
      "1",
      "0",
      '"a"',
      "null",
      "true",
      "size",
      "startsWith",
      " ",
      '"',
      "\\",
      "#",
      "approver in args.l",
      "approver ==",
      "startsWith(approver,",
      "args.n",
      "hour_utc",
      "weekday_utc",
      '"mon"',
      "[]",
      "9007199254740991",
    ),
    { maxLength: 40 },
  )
  .map((parts) => parts.join(" "));

describe("robustness", () => {
  it("the parser, checker, formatter and lint never throw on arbitrary strings", () => {
    const env = {
      amount_minor: 1,
      currency: "EUR",
      tool: "t",
      agent: "a",
      principal: "p",
      audience: "x",
      uses: 0,
      spent_minor: 0,
      hour_utc: 1,
      weekday_utc: "mon",
      args: {},
    } as const;
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: "binary", maxLength: 80 }), tokenSoup), (text) => {
        const compiled = compilePolicy(text);
        formatPolicy(text);
        lintPolicy(text);
        const parsed = parsePolicy(text);
        if (parsed.ok) checkPolicy(parsed.ast);
        if (compiled.ok) {
          compiled.policy.decide(env);
          compiled.policy.evaluate({ ...env, approver: null });
        }
      }),
      params(),
    );
  });
});
