// The semantic diff of two policies: can the new one allow an input the old one refused, or refuse one it allowed?
import type { Bool } from "z3-solver";
import { compilePolicy, parsePolicy, type CompiledPolicy, type Expr } from "@agent-authority/language";
import { Encoder } from "./encode.js";
import { Inputs, TAG } from "./inputs.js";
import { and, or } from "./logic.js";
import type { Analyzer } from "./solver.js";
import { meterFor } from "./solver.js";
import { matchesPattern } from "./pattern.js";
import { stringTerm, Unsupported } from "./strings.js";
import { findWitness, type Search, type WitnessInput } from "./witness.js";

export type Relation = "equivalent" | "narrows" | "widens" | "incomparable" | "unknown";

/** One input on which the two policies disagree, with what each decides for it. */
export interface Difference {
  readonly input: WitnessInput;
  readonly old: boolean;
  readonly new: boolean;
}

export interface DiffResult {
  readonly relation: Relation;
  /** Inputs the new policy allows and the old refused; the first is the fewest names away from the default action. */
  readonly widening: readonly Difference[];
  /** Inputs the old policy allowed and the new refuses. */
  readonly narrowing: readonly Difference[];
  /** Why the answer is `unknown`. */
  readonly reason?: string;
}

/** A domain an `args` value is held to on one side of a diff: a family parameter's type and bounds. */
export interface ArgDomain {
  readonly path: readonly string[];
  readonly type: "int" | "string" | "bool";
  readonly min?: number;
  readonly max?: number;
  readonly oneOf?: readonly string[];
  /** A pattern the whole string matches (the subset `matchesPattern` reads; another is `unknown`). */
  readonly pattern?: string;
  /** The most code points the string holds. */
  readonly maxLength?: number;
}

/** What a caller may add to a diff: domains per side, and its own confirmation of a witness. */
export interface DiffOptions {
  readonly assume?: { readonly old: readonly ArgDomain[]; readonly new: readonly ArgDomain[] };
  /** Whether an input really is a widening (a narrowing), in place of evaluating the two policies (a family instantiates them first). */
  readonly confirm?: { readonly widening: (input: WitnessInput) => boolean; readonly narrowing: (input: WitnessInput) => boolean };
}

/** A policy ready for the solver: its checked tree and its compiled evaluator. */
export interface CheckedPolicy {
  readonly ast: Expr;
  readonly policy: CompiledPolicy;
}

/** Parses and compiles a policy that is known to be valid; throws a TypeError for one with errors (a caller's mistake). */
export function checkedPolicy(text: string): CheckedPolicy {
  const compiled = compilePolicy(text, { origin: "stored" });
  const parsed = parsePolicy(text, { skipTextLimit: true });
  if (!compiled.ok || !parsed.ok) throw new TypeError("the policy has errors; compile it first and report them");
  return { ast: parsed.ast, policy: compiled.policy };
}

/** Whether the compiled policy allows `input` (a run-time error refuses). */
export function allowsInput(policy: CompiledPolicy, input: WitnessInput): boolean {
  const r = policy.evaluate(input);
  return r.ok && r.value;
}

/**
 * Compares two valid policies. `equivalent`, `narrows`, `widens` and `incomparable` are proved
 * (each missing list is an unsat answer); each witness was evaluated by both policies and
 * disagrees as it says. Anything the solver cannot settle in its budget is `unknown`.
 */
export async function diffPolicies(analyzer: Analyzer, oldText: string, newText: string): Promise<DiffResult> {
  return diffChecked(analyzer, checkedPolicy(oldText), checkedPolicy(newText));
}

export async function diffChecked(
  analyzer: Analyzer,
  before: CheckedPolicy,
  after: CheckedPolicy,
  options: DiffOptions = {},
): Promise<DiffResult> {
  const inputs = new Inputs(analyzer.ctx);
  const encoder = new Encoder(inputs);
  let oldAllows: Bool<"main">;
  let newAllows: Bool<"main">;
  try {
    oldAllows = and(analyzer.ctx, ...(options.assume?.old ?? []).map((d) => domainOf(inputs, d)), encoder.allows(before.ast));
    newAllows = and(analyzer.ctx, ...(options.assume?.new ?? []).map((d) => domainOf(inputs, d)), encoder.allows(after.ast));
  } catch (error) {
    if (error instanceof Unsupported) return unknown(`the analysis cannot encode ${error.message}`);
    throw error;
  }
  const c = analyzer.ctx;
  const meter = meterFor(analyzer);
  const wider = await findWitness(
    {
      inputs,
      goal: c.And(newAllows, c.Not(oldAllows)),
      confirm: options.confirm?.widening ?? ((x) => allowsInput(after.policy, x) && !allowsInput(before.policy, x)),
    },
    meter,
  );
  const narrower = await findWitness(
    {
      inputs,
      goal: c.And(oldAllows, c.Not(newAllows)),
      confirm: options.confirm?.narrowing ?? ((x) => allowsInput(before.policy, x) && !allowsInput(after.policy, x)),
    },
    meter,
  );
  return relationOf(wider, narrower);
}

/** The condition that the `args` value at `d.path` lies in its domain. */
export function domainOf(inputs: Inputs, d: ArgDomain): Bool<"main"> {
  const c = inputs.ctx;
  const v = inputs.arg(d.path);
  if (d.type === "bool") return v.tag.eq(TAG.bool);
  if (d.type === "string")
    return and(
      c,
      v.tag.eq(TAG.string),
      d.oneOf === undefined ? c.Bool.val(true) : or(c, ...d.oneOf.map((x) => v.str.eq(stringTerm(c, x)))),
      d.pattern === undefined ? c.Bool.val(true) : matchesPattern(c, v.str, d.pattern),
      d.maxLength === undefined ? c.Bool.val(true) : v.str.length().le(d.maxLength),
    );
  return and(
    c,
    v.tag.eq(TAG.int),
    d.min === undefined ? c.Bool.val(true) : v.int.ge(d.min),
    d.max === undefined ? c.Bool.val(true) : v.int.le(d.max),
  );
}

function unknown(reason: string): DiffResult {
  return { relation: "unknown", widening: [], narrowing: [], reason };
}

/** The relation two searches show; either unknown makes it unknown, whatever the other found. */
export function relationOf(wider: Search, narrower: Search): DiffResult {
  const widening = wider.kind === "found" ? [{ input: wider.input, old: false, new: true }] : [];
  const narrowing = narrower.kind === "found" ? [{ input: narrower.input, old: true, new: false }] : [];
  if (wider.kind === "unknown" || narrower.kind === "unknown") {
    const reason = wider.kind === "unknown" ? wider.reason : (narrower as { reason: string }).reason;
    return { relation: "unknown", widening, narrowing, reason };
  }
  const relation: Relation =
    widening.length > 0 ? (narrowing.length > 0 ? "incomparable" : "widens") : narrowing.length > 0 ? "narrows" : "equivalent";
  return { relation, widening, narrowing };
}
