// Lint by proof: `never-allows`, `always-allows` and `redundant-condition`, settled by the solver where the interval check cannot tell.
import type { Bool } from "z3-solver";
import type { Diagnostic, Expr } from "@agent-authority/language";
import { type ArgDomain, checkedPolicy, domainOf } from "./diff.js";
import { Encoder } from "./encode.js";
import { Inputs } from "./inputs.js";
import { ANALYSIS_LIMITS } from "./limits.js";
import { type Analyzer, check, type Meter, meterFor } from "./solver.js";
import { Unsupported } from "./strings.js";

type BinaryExpr = Extract<Expr, { kind: "binary" }>;

/** The codes of the proved warnings: `never-allows` is the language's own; the other two only a solver can give. */
export type ProvedCode = "never-allows" | "always-allows" | "redundant-condition";

/** A warning proved by the solver, shaped as the language's diagnostics are. */
export type ProvedDiagnostic = Omit<Diagnostic, "code" | "fix"> & { readonly code: ProvedCode };

/** Whether a formula can hold, within the inputs' domains: true, false, or undefined when the solver cannot tell in time. */
interface Satisfiability {
  test(f: Bool<"main">): Promise<boolean | undefined>;
  /** Why the last question the solver could not settle was left open. */
  unknown?: string;
}

/**
 * One solver for every question of a policy, the domains added once: each formula is an
 * assumption of its own call, so the solver keeps what it learned of the domains between calls.
 */
function satisfiability(analyzer: Analyzer, inputs: Inputs, assumed: readonly Bool<"main">[], meter: Meter): Satisfiability {
  const solver = new analyzer.ctx.Solver();
  const added = inputs.domain.length;
  solver.add(...inputs.domain, ...assumed);
  solver.push();
  const out: Satisfiability = {
    async test(f) {
      // A domain made after the solver (a name first read by a later encoding) joins the call's assumptions.
      const v = await check(analyzer.ctx, solver, meter, [...inputs.domain.slice(added), f]);
      if (v.kind === "unknown") out.unknown = v.reason;
      return v.kind === "unknown" ? undefined : v.kind === "sat";
    },
  };
  return out;
}

/** What a lint proof may add: domains of `args` values (a family's parameters), and a time past which it stops. */
export interface ProveOptions {
  readonly assume?: readonly ArgDomain[];
  /** A time (as `Date.now()`) past which no question is asked: a whole lint run's budget. */
  readonly until?: number;
}

/** The proved warnings of a policy, and, when some question was left open, why (lint then says less, never more). */
export interface LintProof {
  readonly diagnostics: readonly ProvedDiagnostic[];
  readonly unknown?: string;
}

/**
 * The proved warnings of a valid policy: never-allows (no input, approver included, satisfies it),
 * always-allows (every input does; not said of the bare literal `true`), and redundant-condition
 * for each operand of a `&&` or `||` whose removal changes no decision. A question the solver cannot
 * settle within its budget gives no warning: lint stays silent rather than guess.
 */
export async function proveLint(analyzer: Analyzer, text: string): Promise<readonly ProvedDiagnostic[]> {
  return (await proveLintReport(analyzer, text)).diagnostics;
}

/** `proveLint`, saying why when a question was left open: the solver's budget, or `options.until` passed. */
export async function proveLintReport(analyzer: Analyzer, text: string, options: ProveOptions = {}): Promise<LintProof> {
  const { ast } = checkedPolicy(text);
  const inputs = new Inputs(analyzer.ctx);
  const encoder = new Encoder(inputs);
  const meter = meterFor(analyzer, options.until);
  let outcome: { allows: Bool<"main">; ok: Bool<"main"> };
  let assumed: Bool<"main">[];
  try {
    outcome = encoder.outcome(ast);
    assumed = (options.assume ?? []).map((d) => domainOf(inputs, d));
  } catch (error) {
    if (error instanceof Unsupported) return { diagnostics: [], unknown: `the analysis cannot encode ${error.message}` };
    throw error;
  }
  const sat = satisfiability(analyzer, inputs, assumed, meter);
  const diagnostics = await provedWarnings(analyzer, ast, encoder, outcome, sat);
  const late = options.until !== undefined && Date.now() >= options.until;
  const unknown = sat.unknown === undefined ? undefined : late ? "the proof budget of the lint run ran out" : sat.unknown;
  return unknown === undefined ? { diagnostics } : { diagnostics, unknown };
}

async function provedWarnings(
  analyzer: Analyzer,
  ast: Expr,
  encoder: Encoder,
  { allows, ok }: { allows: Bool<"main">; ok: Bool<"main"> },
  sat: Satisfiability,
): Promise<ProvedDiagnostic[]> {
  const c = analyzer.ctx;
  if ((await sat.test(allows)) === false) {
    return [
      warning(
        "never-allows",
        "this policy can never allow",
        ast,
        "proved by the solver: no input, whatever its approver and arguments, satisfies every condition",
      ),
    ];
  }
  if (!(ast.kind === "bool" && ast.value) && (await sat.test(c.Not(allows))) === false) {
    return [
      warning("always-allows", "this policy allows every action", ast, "proved by the solver: no input, approver included, is refused"),
    ];
  }
  const out: ProvedDiagnostic[] = [];
  for (const { operand, identity } of logicalOperands(ast).slice(0, ANALYSIS_LIMITS.redundancyOperandsMax)) {
    let mutated: { allows: Bool<"main">; ok: Bool<"main"> };
    try {
      mutated = encoder.outcome(replaced(ast, operand, { kind: "bool", value: identity, span: operand.span }));
    } catch (error) {
      if (error instanceof Unsupported) continue;
      throw error;
    }
    // Redundant: removing it changes no decision, and makes no input fail that evaluated before (a guard such as `args.n != null` is kept).
    const changes = c.Or(c.Xor(allows, mutated.allows), c.And(ok, c.Not(mutated.ok)));
    if ((await sat.test(changes)) === false) {
      out.push(
        warning(
          "redundant-condition",
          identity ? "this condition is implied by the others" : "this alternative never changes the outcome",
          operand,
          "proved by the solver: removing it changes no decision and makes no input fail",
        ),
      );
    }
  }
  return out;
}

function warning(code: ProvedCode, message: string, at: Expr, help: string): ProvedDiagnostic {
  return { code, severity: "warning", message, span: at.span, help };
}

/** Each operand of every `&&` and `||` run, with the value that removing it leaves (`true` in a conjunction, `false` in a disjunction). */
function logicalOperands(root: Expr): { operand: Expr; identity: boolean }[] {
  const out: { operand: Expr; identity: boolean }[] = [];
  const stack: Expr[] = [root];
  while (stack.length > 0) {
    const e = stack.pop()!;
    if (e.kind === "binary" && (e.op === "&&" || e.op === "||")) {
      for (const side of [e.left, e.right]) {
        if (!(side.kind === "binary" && side.op === e.op)) out.push({ operand: side, identity: e.op === "&&" });
      }
    }
    stack.push(...children(e));
  }
  return out.sort((a, b) => a.operand.span.start - b.operand.span.start);
}

function children(e: Expr): Expr[] {
  switch (e.kind) {
    case "list":
      return [...e.elements];
    case "call":
      return [...e.args];
    case "unary":
      return [e.operand];
    case "binary":
      return [e.left, e.right];
    default:
      return [];
  }
}

/** `root` with the node `target` (by identity) replaced. */
export function replaced(root: Expr, target: Expr, by: Expr): Expr {
  if (root === target) return by;
  switch (root.kind) {
    case "list":
      return { ...root, elements: root.elements.map((x) => replaced(x, target, by)) };
    case "call":
      return { ...root, args: root.args.map((x) => replaced(x, target, by)) };
    case "unary":
      return { ...root, operand: replaced(root.operand, target, by) };
    case "binary":
      return { ...root, left: replaced(root.left, target, by), right: replaced((root as BinaryExpr).right, target, by) };
    default:
      return root;
  }
}
