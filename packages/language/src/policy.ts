// The public operations: compile a policy once, evaluate and decide it, conjoin a chain, format, lint.
import type { Expr } from "./ast.js";
import { mentionsApprover } from "./ast.js";
import { balancedChain } from "./ast-from-cst.js";
import { checkPolicy, unionTable, type TypeTable } from "./check.js";
import { TYPES, type Type } from "./types.js";
import { compileExpr, compileLogicTable, type EvalEnv, type Evaluator } from "./compile.js";
import { type LogicTable, runBothApprovers, runTable } from "./table.js";
import { byPosition, error, type Diagnostic } from "./diagnostic.js";
import type { PolicyEnvironment } from "./environment.js";
import { formatExpr } from "./format.js";
import { formatWithComments } from "./format-comments.js";
import { lintAst } from "./lint.js";
import { hiddenCharacterWarnings, mixedScriptWarnings } from "./hidden-lint.js";
import { LIMITS, utf8Length } from "./limits.js";
import { parsePolicy } from "./parse.js";
import { approverCost, approverCostError } from "./approver-cost.js";
import {
  and,
  compileResidual,
  onlyNullApprover,
  residualText,
  sameFormula,
  search,
  type Formula,
  type ListCache,
  type PartialEvaluator,
  type ResidualRun,
} from "./residual.js";
import { costError, costEstimate, searchUnits, type CostEstimate } from "./cost.js";
import { charge, describe, type Evaluated, Failure, type Meter, NEVER_CHARGED } from "./values.js";

export type PolicyOutcome =
  | { readonly outcome: "allow" }
  | { readonly outcome: "deny"; readonly error?: Diagnostic }
  | { readonly outcome: "gated"; readonly residual: string };

export type EvaluationResult = { readonly ok: true; readonly value: boolean } | { readonly ok: false; readonly error: Diagnostic };

/**
 * A budget of work units shared by several evaluations (a delegation chain's policies, one
 * decision): each adds what it spent, and one that would pass `limit` fails closed.
 */
export interface CostMeter {
  spent: number;
  readonly limit: number;
}

/** A fresh meter; by default the budget of one whole decision. */
export function costMeter(limit: number = LIMITS.decisionUnitsMax): CostMeter {
  return { spent: 0, limit };
}

export interface CompiledPolicy {
  /** The canonical (formatted) source. */
  readonly text: string;
  /** The static worst case of this policy's work, in units (docs/policy-language.md, "Cost"). */
  readonly cost: CostEstimate;
  /**
   * Evaluates with every name bound, `approver` included (it may be null). Charged to `budget`,
   * or to a budget of its own of LIMITS.evaluationUnitsMax.
   */
  evaluate(env: PolicyEnvironment, budget?: CostMeter): EvaluationResult;
  /** Partial evaluation with `approver` unknown: allow, deny, or gated with the residual. */
  decide(env: Omit<PolicyEnvironment, "approver">, budget?: CostMeter): PolicyOutcome;
}

export type CompileResult =
  | { readonly ok: true; readonly policy: CompiledPolicy; readonly warnings: readonly Diagnostic[] }
  | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] };

/** One policy's partial evaluation, its residual kept as a formula for a chain to conjoin. */
type PartOutcome =
  | { readonly kind: "allow" }
  | { readonly kind: "deny"; readonly error?: Diagnostic }
  | { readonly kind: "gated"; readonly formula: Formula; readonly everyone: boolean };

const ALLOW_PART: PartOutcome = Object.freeze({ kind: "allow" });
const DENY_PART: PartOutcome = Object.freeze({ kind: "deny" });
/** Gated for every non-null approver: the residual `true`. */
const GATED_EVERYONE: PartOutcome = Object.freeze({ kind: "gated", formula: true, everyone: true });

const TRUE_RESULT: EvaluationResult = Object.freeze({ ok: true, value: true });
const FALSE_RESULT: EvaluationResult = Object.freeze({ ok: true, value: false });
const ALLOW: PolicyOutcome = Object.freeze({ outcome: "allow" });
const DENY: PolicyOutcome = Object.freeze({ outcome: "deny" });

/**
 * Which faster paths a policy takes: partial evaluation by two values (decideSafe) and its trees
 * as tables of tests (table.ts). Both, but where a property test holds one to the general path.
 */
interface Paths {
  readonly twoValues: boolean;
  readonly tables: boolean;
}
const FASTEST: Paths = Object.freeze({ twoValues: true, tables: true });

class Policy implements CompiledPolicy {
  /** The policy's tree, run by runTable. */
  private readonly root: LogicTable;
  /** Whether evaluation can fail at run time; if not, it charges nothing but the policy's nodes. */
  private readonly rootCanFail: boolean;
  /** Partial evaluation is compiled on the first `decide`, so compiling stays cheap. */
  private residual: PartialEvaluator | null | undefined;
  /**
   * For a policy that compares `approver` with `null` alone and cannot fail, its tree with
   * `approver` non-null, made with `residual`: partial evaluation is then two values (decideSafe).
   */
  private nonNull: LogicTable | null = null;
  /** Whether partial evaluation is two values (decideSafe), read from `nonNull` or by one walk of `root` (runBothApprovers). */
  private twoValues = false;
  private canonical: string | undefined;
  private canonicalBytes: number | undefined;

  /** The checked tree, kept for `conjoin` and for compiling partial evaluation on demand. */
  constructor(
    readonly ast: Expr,
    readonly types: TypeTable,
    readonly cost: CostEstimate,
    readonly paths: Paths = FASTEST,
  ) {
    const root = compileLogicTable(ast, types, { nonNull: false, rows: paths.tables });
    this.root = root.table;
    this.rootCanFail = root.canFail;
  }

  /**
   * The state of one evaluation of this policy charged to `budget`, `units` spent up front: its
   * meter, and for partial evaluation its first error and the chain's lists (`lists`).
   */
  private open(budget: CostMeter | undefined, units: number, lists?: ListCache): ResidualRun {
    const before = budget === undefined ? 0 : budget.spent;
    // One policy never spends more than its own budget, whatever is left of a shared one.
    const limit = budget === undefined ? LIMITS.evaluationUnitsMax : Math.min(budget.limit, before + LIMITS.evaluationUnitsMax);
    return { spent: before + units, limit, error: undefined, lists, urls: undefined, approverRead: false };
  }

  /** Adds what `meter` spent to `budget`; the limit it passed, or undefined. */
  private close(meter: Meter, budget: CostMeter | undefined): number | undefined {
    if (budget !== undefined) budget.spent = meter.spent;
    return meter.spent <= meter.limit ? undefined : meter.limit;
  }

  private exceeded(limit: number): Diagnostic {
    const message = `evaluation used more than its budget of ${limit} work units`;
    return error(
      "cost-exceeded",
      message,
      this.ast.span,
      "the action's `args` are too large for what this policy does with them; the policy refuses",
    );
  }

  private residualOf(): PartialEvaluator | null {
    if (this.residual !== undefined) return this.residual;
    const types = this.types;
    const evaluators = new Map<Expr, Evaluator>();
    this.residual = mentionsApprover(this.ast)
      ? compileResidual(this.ast, (e) => {
          let fn = evaluators.get(e);
          if (fn === undefined) evaluators.set(e, (fn = compileExpr(e, types)));
          return fn;
        })
      : null;
    if (this.residual !== null && this.paths.twoValues && !this.rootCanFail && onlyNullApprover(this.ast)) {
      if (this.paths.tables && !this.root.approverInCalls) this.twoValues = true;
      else {
        const nonNull = compileLogicTable(this.ast, types, { nonNull: true, rows: this.paths.tables });
        this.nonNull = nonNull.canFail ? null : nonNull.table;
        this.twoValues = !nonNull.canFail;
      }
    }
    return this.residual;
  }

  get text(): string {
    return (this.canonical ??= formatExpr(this.ast));
  }

  /** The last residual printed, by its formula: the same policy mostly gates the same way. */
  private lastResidual:
    | { readonly formula: Formula; readonly everyone: boolean; readonly bytesMax: number; readonly text: string }
    | undefined;

  /**
   * residualText of one of this policy's gated outcomes, printed again only when the formula differs
   * from the last one printed (sameFormula: node for node, failure leaves of the same action only).
   */
  residualTextOf(formula: Formula, everyone: boolean, bytesMax: number): string {
    const last = this.lastResidual;
    if (last !== undefined && last.everyone === everyone && last.bytesMax === bytesMax && sameFormula(last.formula, formula))
      return last.text;
    const text = residualText(formula, everyone, bytesMax);
    this.lastResidual = { formula, everyone, bytesMax, text };
    return text;
  }

  /** The UTF-8 length of the canonical text: the bound of this policy's residuals. */
  get textBytes(): number {
    return (this.canonicalBytes ??= utf8Length(this.text));
  }

  evaluate(env: PolicyEnvironment, budget?: CostMeter): EvaluationResult {
    if (!this.rootCanFail) return this.evaluateSafe(env, budget);
    const meter = this.open(budget, this.cost.nodes);
    const v = meter.spent <= meter.limit ? runTable(this.root, env, meter) : undefined;
    const passed = this.close(meter, budget);
    if (passed !== undefined) return { ok: false, error: this.exceeded(passed) };
    if (v === true) return TRUE_RESULT;
    if (v === false) return FALSE_RESULT;
    return { ok: false, error: this.failureOf(v) };
  }

  /**
   * `evaluate` for a policy that cannot fail at run time, and so charges nothing but its nodes up
   * front (INVARIANT (charging-can-fail)): the same result and the same charge, without a meter.
   */
  private evaluateSafe(env: PolicyEnvironment, budget: CostMeter | undefined): EvaluationResult {
    const before = budget === undefined ? 0 : budget.spent;
    const limit = budget === undefined ? LIMITS.evaluationUnitsMax : Math.min(budget.limit, before + LIMITS.evaluationUnitsMax);
    const spent = before + this.cost.nodes;
    if (budget !== undefined) budget.spent = spent;
    if (spent > limit) return { ok: false, error: this.exceeded(limit) };
    const v = runTable(this.root, env, NEVER_CHARGED);
    if (v === true) return TRUE_RESULT;
    if (v === false) return FALSE_RESULT;
    return { ok: false, error: this.failureOf(v) };
  }

  decide(env: Omit<PolicyEnvironment, "approver">, budget?: CostMeter): PolicyOutcome {
    const part = this.partial(env, budget);
    if (part.kind !== "gated")
      return part.kind === "allow" ? ALLOW : part.error === undefined ? DENY : { outcome: "deny", error: part.error };
    return { outcome: "gated", residual: this.residualTextOf(part.formula, part.everyone, this.textBytes) };
  }

  /** Partial evaluation, charged to `budget`; a gated outcome keeps its residual as a formula. */
  partial(env: Omit<PolicyEnvironment, "approver">, budget: CostMeter | undefined, lists?: ListCache): PartOutcome {
    // Deciding walks the tree twice when there is a residual to build, once otherwise.
    const passes = this.residualOf() === null ? 1 : 2;
    if (this.twoValues) return this.decideSafe(env, budget);
    const run = this.open(budget, passes * this.cost.nodes, lists);
    const outcome = run.spent <= run.limit ? this.decideWithin(env, run) : DENY_PART;
    // Past the budget anywhere (a failure leaf of the residual included), the decision denies.
    const passed = this.close(run, budget);
    if (passed !== undefined) return { kind: "deny", error: this.exceeded(passed) };
    return outcome;
  }

  /**
   * `partial` of a policy that compares `approver` with `null` alone and whose trees cannot fail
   * (so they charge nothing, INVARIANT (charging-can-fail), and give a truth value: the checker
   * lets such a policy combine `approver` only with `!`, `&&` and `||`). Every atom of its residual
   * folds to a truth value, the one the atom has with any approver, and nothing fails: so its
   * residual is its value with any approver (`nonNull`), and the residual pass's outcome is read
   * from two values: false with an approver denies; true with one, allow if also true without,
   * else gated for every approver. Charged as `partial` charges it: two passes of its nodes. With
   * no `nonNull` tree, both values are read by one walk of the table (runBothApprovers).
   */
  private decideSafe(env: Omit<PolicyEnvironment, "approver">, budget: CostMeter | undefined): PartOutcome {
    const before = budget === undefined ? 0 : budget.spent;
    const limit = budget === undefined ? LIMITS.evaluationUnitsMax : Math.min(budget.limit, before + LIMITS.evaluationUnitsMax);
    const spent = before + 2 * this.cost.nodes;
    if (budget !== undefined) budget.spent = spent;
    if (spent > limit) return { kind: "deny", error: this.exceeded(limit) };
    const given = env as EvalEnv;
    const nonNull = this.nonNull;
    if (nonNull === null) {
      const outcome = runBothApprovers(this.root, given);
      return outcome === "allow" ? ALLOW_PART : outcome === "deny" ? DENY_PART : GATED_EVERYONE;
    }
    if (runTable(nonNull, given, NEVER_CHARGED) === false) return DENY_PART;
    const none = runTable(
      this.root,
      given.approver === undefined || given.approver === null ? given : { ...given, approver: null },
      NEVER_CHARGED,
    );
    return none === true ? ALLOW_PART : GATED_EVERYONE;
  }

  private decideWithin(env: Omit<PolicyEnvironment, "approver">, run: ResidualRun): PartOutcome {
    // `approver` is unknown here whatever the caller passed: a full environment must not leak one in.
    const given = env as EvalEnv;
    const withoutApprover: EvalEnv = given.approver === undefined || given.approver === null ? given : { ...given, approver: null };
    const residual = this.residualOf();
    if (residual === null) {
      const v = runTable(this.root, withoutApprover, run);
      if (v === true) return ALLOW_PART;
      if (v === false) return DENY_PART;
      return { kind: "deny", error: this.failureOf(v) };
    }
    // With `approver` unknown: evaluate once with no approval (approver is null), and fold the
    // policy's tree over a non-null approver into its residual (docs/decisions/0110).
    // A failure that only a null approver causes (say `startsWith(approver, …)`) is no reason to
    // report: the policy denies because no approval would do, and that is what the decision says.
    const none = runTable(this.root, withoutApprover, run);
    // Evaluation runs left to right and stops where the outcome is known: one that never reached
    // `approver` took the path any approver would take, so its value is every approver's. The
    // residual pass and its search would only confirm it (the charge for both stays paid).
    if (!run.approverRead && typeof none === "boolean") return none ? ALLOW_PART : DENY_PART;
    const r = residual(withoutApprover, run);
    const found = search(r);
    if (charge(run, searchUnits(found.steps), this.ast.span) !== undefined) return DENY_PART;
    if (none === true && found.everyone) return ALLOW_PART;
    if (found.witness !== undefined) return { kind: "gated", formula: r, everyone: found.everyone };
    const reason = run.error;
    return reason === undefined ? DENY_PART : { kind: "deny", error: reason };
  }

  private failureOf(v: Evaluated): Diagnostic {
    if (v instanceof Failure) return v.diagnostic;
    return error("runtime-type", `a policy must be a condition, not \`${describe(v)}\``, this.ast.span);
  }
}

/**
 * `policy` deciding by the residual pass alone, never by its two trees (Policy.decideSafe): the
 * general path that the shortcut's property test holds it to. Not exported by the package.
 */
export function withResidualPass(policy: CompiledPolicy): CompiledPolicy {
  if (!(policy instanceof Policy)) throw new TypeError("withResidualPass takes policies made by compilePolicy or conjoin");
  return new Policy(policy.ast, policy.types, policy.cost, { ...policy.paths, twoValues: false });
}

/**
 * `policy` running its trees as closures, never as tables of tests (table.ts): the general path
 * that the tables' property test holds them to. Not exported by the package.
 */
export function withClosures(policy: CompiledPolicy): CompiledPolicy {
  if (!(policy instanceof Policy)) throw new TypeError("withClosures takes policies made by compilePolicy or conjoin");
  return new Policy(policy.ast, policy.types, policy.cost, { ...policy.paths, tables: false });
}

/**
 * What a text to compile is. `issue` (the default): a policy being written or issued, held to
 * every limit. `stored`: a policy accepted when its grant was issued, decided now; the run-time
 * cost budget still bounds every evaluation. `residual`: the residual of a gated decision, read
 * back to judge an approver; it is bounded by construction (never larger than its policies, decision
 * 0131), so the policy text limit and the issue-time estimates do not apply to it.
 */
export type PolicyOrigin = "issue" | "stored" | "residual";

/** Parses, checks and compiles `text`. Never throws; a grant without a policy has the policy `true`. */
export function compilePolicy(text: string, options: { readonly origin?: PolicyOrigin } = {}): CompileResult {
  const origin = options.origin ?? "issue";
  const parsed = parsePolicy(text, { skipTextLimit: origin === "residual" });
  if (!parsed.ok) return { ok: false, diagnostics: parsed.diagnostics };
  const checked = checkPolicy(parsed.ast);
  if (checked.diagnostics.length > 0) return { ok: false, diagnostics: [...checked.diagnostics].sort(byPosition) };
  const search = approverCost(parsed.ast);
  const tooLarge = origin === "residual" ? undefined : approverCostError(parsed.ast, search);
  if (tooLarge !== undefined) return { ok: false, diagnostics: [tooLarge] };
  const estimate = costEstimate(parsed.ast, checked.types, search);
  const tooCostly = origin === "issue" ? costError(parsed.ast, estimate) : undefined;
  if (tooCostly !== undefined) return { ok: false, diagnostics: [tooCostly] };
  const policy = new Policy(parsed.ast, checked.types, estimate);
  const ast = parsed.ast;
  let warnings: readonly Diagnostic[] | undefined;
  // Lint runs when its warnings are first read: deciding never needs them, and compiling stays cheap.
  return {
    ok: true,
    policy,
    get warnings(): readonly Diagnostic[] {
      return (warnings ??= [...lintAst(ast, checked.types), ...hiddenCharacterWarnings(text), ...mixedScriptWarnings(ast)].sort(
        byPosition,
      ));
    },
  };
}

const TRUE_POLICY = (() => {
  const result = compilePolicy("true");
  if (!result.ok) throw new Error("the policy `true` must compile");
  return result.policy;
})();

/**
 * The conjunction of several policies (a delegation chain, root first), decided as one expression:
 * partial evaluation sees every condition on `approver` at once, so two residuals that no single
 * approver satisfies together deny. Spans in its run-time errors refer to its own `text`.
 */
export function conjoin(policies: readonly CompiledPolicy[]): CompiledPolicy {
  const parts = policies.map((p) => {
    // Dropping an unknown policy from a conjunction would widen authority, so it is a programmer error.
    if (!(p instanceof Policy)) throw new TypeError("conjoin takes policies made by compilePolicy or conjoin");
    return p;
  });
  if (parts.length === 0) return TRUE_POLICY;
  if (parts.length === 1) return policies[0]!;
  // Balanced, as the parser builds chains, so that a long delegation chain stays a shallow tree.
  const joints = new Map<Expr, Type>();
  const ast = balancedChain(
    "&&",
    parts.map((p) => p.ast),
    (node) => joints.set(node, TYPES.bool),
  );
  // Reparse the canonical text so that spans point into it; each part already passed every check.
  const reparsed = parsePolicy(formatExpr(ast), { skipTextLimit: true });
  if (reparsed.ok) {
    const checked = checkPolicy(reparsed.ast);
    if (checked.diagnostics.length === 0) return new Policy(reparsed.ast, checked.types, costEstimate(reparsed.ast, checked.types));
  }
  const types = unionTable([joints, ...parts.map((p) => p.types)]);
  return new Policy(ast, types, costEstimate(ast, types));
}

/** One link of a delegation chain: its policy and the environment it is decided in. */
export interface ChainLinkPolicy {
  readonly policy: CompiledPolicy;
  readonly env: Omit<PolicyEnvironment, "approver">;
}

export type ChainOutcome =
  | { readonly outcome: "allow" }
  /** Link `link` refuses the action whoever approves it (with the run-time error, if one decided). */
  | { readonly outcome: "deny"; readonly link: number; readonly error?: Diagnostic }
  | { readonly outcome: "gated"; readonly residual: string }
  /** Each gated link can be approved, but no single approver satisfies them all. */
  | { readonly outcome: "no-single-approver"; readonly residuals: readonly string[] }
  /** The decision's budget of work units ran out. */
  | { readonly outcome: "cost-exceeded"; readonly link: number | null; readonly error: Diagnostic };

/**
 * Decides a delegation chain (root first) with `approver` unknown, each policy in its own link's
 * environment, as the conjunction of the links: the first link that refuses denies; the residuals
 * of the gated links are conjoined as formulas, so one approver must satisfy them all, and their
 * text is printed once. No residual is printed and parsed again: the work is the links' partial
 * evaluations and one search, all charged to one budget (decision 0132).
 */
export function decideChain(links: readonly ChainLinkPolicy[], budget: CostMeter = costMeter()): ChainOutcome {
  if (links.length === 1) return decideLink(links[0]!.policy, links[0]!.env, budget);
  // The links read the same `args`: a list is read once for all of them.
  const lists: ListCache | undefined = links.length > 1 ? new Map() : undefined;
  const gated: { readonly policy: CompiledPolicy; readonly formula: Formula }[] = [];
  let everyone = true;
  for (let i = 0; i < links.length; i++) {
    const { policy, env } = links[i]!;
    if (!(policy instanceof Policy)) throw new TypeError("decideChain takes policies made by compilePolicy or conjoin");
    const part = policy.partial(env, budget, lists);
    if (part.kind === "deny") {
      if (part.error?.code === "cost-exceeded") return { outcome: "cost-exceeded", link: i, error: part.error };
      return part.error === undefined ? { outcome: "deny", link: i } : { outcome: "deny", link: i, error: part.error };
    }
    if (part.kind !== "gated") continue;
    // The same residual twice (a child repeating its parent's policy) asks the approver once.
    if (gated.some((g) => g.policy === policy && sameFormula(g.formula, part.formula))) continue;
    gated.push({ policy, formula: part.formula });
    everyone &&= part.everyone;
  }
  if (gated.length === 0) return { outcome: "allow" };
  // INVARIANT (residual-size): the residual's text is no longer than the gated policies' together.
  const bytesMax = gated.reduce((n, g) => n + (g.policy as Policy).textBytes + 8, 0);
  if (gated.length === 1) return { outcome: "gated", residual: residualText(gated[0]!.formula, everyone, bytesMax) };
  let joint: Formula = true;
  for (const g of gated) joint = and(joint, g.formula);
  const found = search(joint);
  budget.spent += searchUnits(found.steps);
  if (budget.spent > budget.limit) return { outcome: "cost-exceeded", link: null, error: costExceededError(budget) };
  if (found.witness !== undefined) return { outcome: "gated", residual: residualText(joint, found.everyone, bytesMax) };
  return { outcome: "no-single-approver", residuals: gated.map((g) => residualText(g.formula, false, (g.policy as Policy).textBytes)) };
}

const ALLOW_CHAIN: ChainOutcome = Object.freeze({ outcome: "allow" });
const DENY_FIRST_LINK: ChainOutcome = Object.freeze({ outcome: "deny", link: 0 });
/** Gated for every approver: residualText prints any such formula as one text, so the outcome is one object. */
const GATED_EVERYONE_CHAIN: ChainOutcome = Object.freeze({ outcome: "gated", residual: residualText(true, true) });

/**
 * decideChain of a chain of one link (the policy gate's common case), by the policy's partial
 * evaluation directly: no list cache, no list of gated links, the same outcome. Without `budget`
 * no meter is made: one policy's own budget (LIMITS.evaluationUnitsMax) is what a fresh decision's
 * meter would leave it, so the limit, the charge and `cost-exceeded` are the same.
 */
export function decideLink(policy: CompiledPolicy, env: Omit<PolicyEnvironment, "approver">, budget?: CostMeter): ChainOutcome {
  if (!(policy instanceof Policy)) throw new TypeError("decideLink takes policies made by compilePolicy or conjoin");
  const part = policy.partial(env, budget);
  switch (part.kind) {
    case "allow":
      return ALLOW_CHAIN;
    case "deny":
      if (part.error === undefined) return DENY_FIRST_LINK;
      return part.error.code === "cost-exceeded"
        ? { outcome: "cost-exceeded", link: 0, error: part.error }
        : { outcome: "deny", link: 0, error: part.error };
    default:
      if (part.everyone) return GATED_EVERYONE_CHAIN;
      // INVARIANT (residual-size): as decideChain bounds one gated link's residual.
      return { outcome: "gated", residual: policy.residualTextOf(part.formula, part.everyone, policy.textBytes + 8) };
  }
}

function costExceededError(budget: CostMeter): Diagnostic {
  return error(
    "cost-exceeded",
    `evaluation used more than its budget of ${budget.limit} work units`,
    { start: 0, end: 0 },
    "the action's `args` are too large for what these policies do with them; the decision refuses",
  );
}

/**
 * The canonical form of `text`, or the diagnostics that stop it from parsing. The canonical form
 * is checked before it is returned: it must parse within every limit (that it means the same as
 * the original is a property test's law). Otherwise formatting is refused, for example when the
 * canonical spacing would take a compact policy near 4 KiB past it, and the caller keeps its text.
 */
export function formatPolicy(text: string): { ok: true; text: string } | { ok: false; diagnostics: readonly Diagnostic[] } {
  const parsed = parsePolicy(text);
  if (!parsed.ok) return { ok: false, diagnostics: parsed.diagnostics };
  const formatted = formatWithComments(text, parsed.ast, parsed.comments);
  const whole = { start: 0, end: text.length };
  const bytes = utf8Length(formatted);
  if (bytes > LIMITS.policyBytesMax) {
    const message = `formatted, this policy would be ${bytes} bytes, longer than ${LIMITS.policyBytesMax}`;
    return { ok: false, diagnostics: [error("policy-too-long", message, whole, "keep its present form, or shorten it")] };
  }
  const again = parsePolicy(formatted);
  if (!again.ok) {
    const first = again.diagnostics[0]!;
    return {
      ok: false,
      diagnostics: [error(first.code, `formatted, this policy would not parse: ${first.message}`, whole, "keep its present form")],
    };
  }
  return { ok: true, text: formatted };
}

/** Every diagnostic for `text`: its errors if it does not compile, otherwise its lint warnings. */
export function lintPolicy(text: string): readonly Diagnostic[] {
  const result = compilePolicy(text);
  return result.ok ? result.warnings : result.diagnostics;
}
