// Lint by proof: `never-allows`, `always-allows` and `redundant-condition`, settled by the solver where the interval check cannot tell.
import type { Bool } from "z3-solver";
import type { Diagnostic, Expr } from "@agent-authority/language";
import { checkedPolicy } from "./diff.js";
import { Encoder } from "./encode.js";
import { Inputs } from "./inputs.js";
import { ANALYSIS_LIMITS } from "./limits.js";
import { type Analyzer, check, type Deadline, deadlineIn, newSolver } from "./solver.js";
import { Unsupported } from "./strings.js";

type BinaryExpr = Extract<Expr, { kind: "binary" }>;

/** The codes of the proved warnings: `never-allows` is the language's own; the other two only a solver can give. */
export type ProvedCode = "never-allows" | "always-allows" | "redundant-condition";

/** A warning proved by the solver, shaped as the language's diagnostics are. */
export type ProvedDiagnostic = Omit<Diagnostic, "code" | "fix"> & { readonly code: ProvedCode };

/** Whether `f` can hold: true, false, or undefined when the solver cannot tell in time. */
async function satisfiable(analyzer: Analyzer, inputs: Inputs, f: Bool<"main">, deadline: Deadline): Promise<boolean | undefined> {
  const solver = newSolver(analyzer.ctx);
  solver.add(...inputs.domain, f);
  const v = await check(analyzer.ctx, solver, deadline);
  return v.kind === "unknown" ? undefined : v.kind === "sat";
}

/**
 * The proved warnings of a valid policy: never-allows (no input, approver included, satisfies it),
 * always-allows (every input does; not said of the bare literal `true`), and redundant-condition
 * for each operand of a `&&` or `||` whose removal changes no decision. A question the solver cannot
 * settle within its budget gives no warning: lint stays silent rather than guess.
 */
export async function proveLint(analyzer: Analyzer, text: string): Promise<readonly ProvedDiagnostic[]> {
  const { ast } = checkedPolicy(text);
  const inputs = new Inputs(analyzer.ctx);
  const encoder = new Encoder(inputs);
  const c = analyzer.ctx;
  const deadline = deadlineIn(analyzer.budget);
  let allows: Bool<"main">;
  let ok: Bool<"main">;
  try {
    ({ allows, ok } = encoder.outcome(ast));
  } catch (error) {
    if (error instanceof Unsupported) return [];
    throw error;
  }
  if ((await satisfiable(analyzer, inputs, allows, deadline)) === false) {
    return [
      warning(
        "never-allows",
        "this policy can never allow",
        ast,
        "proved by the solver: no input, whatever its approver and arguments, satisfies every condition",
      ),
    ];
  }
  if (!(ast.kind === "bool" && ast.value) && (await satisfiable(analyzer, inputs, c.Not(allows), deadline)) === false) {
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
    if ((await satisfiable(analyzer, inputs, changes, deadline)) === false) {
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
