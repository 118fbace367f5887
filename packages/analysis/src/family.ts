// The semantic diff of two grant families: each grant axis compared, family parameters symbolic within their declared bounds.
import type { Context } from "z3-solver";
import {
  checkParameter,
  FAMILY_LIMITS,
  type GrantFamilyBody,
  type ParameterSpec,
  placeholdersIn,
  substituteText,
} from "@agent-authority/families";
import { compilePolicy } from "@agent-authority/language";
import { type ArgDomain, checkedPolicy, diffChecked, type DiffResult, type Relation } from "./diff.js";
import { DEFAULT_ACTION } from "./inputs.js";
import { longestMatch } from "./pattern.js";
import { type LintProof, proveLintReport } from "./prove.js";
import { Unsupported } from "./strings.js";
import type { Analyzer } from "./solver.js";
import type { WitnessInput } from "./witness.js";

/** One family witness: the input (for the policy axis), the axis that differs, and the parameter values that show it. */
export interface FamilyDifference {
  readonly axis: string;
  readonly input: WitnessInput;
  readonly parameters: Readonly<Record<string, number | string | boolean>>;
  readonly old: boolean;
  readonly new: boolean;
}

export interface FamilyDiffResult {
  readonly relation: Relation;
  readonly widening: readonly FamilyDifference[];
  readonly narrowing: readonly FamilyDifference[];
  readonly reason?: string;
}

/**
 * A parameter named outside the policy and the numeric axes (an agent id, a principal, a tool) whose
 * declaration changed admits other grants in a way the diff does not compare: `unknown`. The policy's
 * parameters are compared by the solver, the numeric axes' by their bounds.
 */
function compareParameterSpecs(before: GrantFamilyBody, after: GrantFamilyBody, out: Partial): void {
  const outside = (g: Readonly<Record<string, unknown>>): string[] => {
    const rest = Object.fromEntries(Object.entries(g).filter(([k]) => k !== "policy" && !(NUMERIC_AXES as readonly string[]).includes(k)));
    return placeholdersIn(JSON.stringify(rest)).map((u) => u.name);
  };
  for (const name of new Set([...outside(before.grant), ...outside(after.grant)])) {
    const x = Object.hasOwn(before.parameters, name) ? before.parameters[name] : undefined;
    const y = Object.hasOwn(after.parameters, name) ? after.parameters[name] : undefined;
    if (JSON.stringify(specShape(x)) !== JSON.stringify(specShape(y)))
      out.unknown.push(`the declaration of parameter \`${name}\` changed, which the diff does not compare`);
  }
}

/** What of a parameter's declaration bounds its values (not its description, default or example). */
function specShape(spec: ParameterSpec | undefined): unknown {
  if (spec === undefined) return null;
  return { type: spec.type, min: spec.min, max: spec.max, enum: spec.enum, pattern: spec.pattern, max_length: spec.max_length };
}

/** The axes compared as "more is wider": a larger upper bound widens. */
const NUMERIC_AXES = ["budget_count", "budget_amount_minor", "ttl_hours"] as const;
const PARAMETER_PREFIX = "__family_parameter_";

/** The default action (ints 0, strings empty, Monday, no approver, no arguments), fresh each time. */
function defaultInput(): WitnessInput {
  return { ...DEFAULT_ACTION, args: {} };
}

interface Partial {
  widening: FamilyDifference[];
  narrowing: FamilyDifference[];
  unknown: string[];
}

/** Compares two valid families axis by axis: tools, budgets, TTL, audience, every other field, and the policy. */
export async function diffFamilies(analyzer: Analyzer, before: GrantFamilyBody, after: GrantFamilyBody): Promise<FamilyDiffResult> {
  const out: Partial = { widening: [], narrowing: [], unknown: [] };
  const a = before.grant;
  const b = after.grant;
  compareTools(scopeTools(a), scopeTools(b), out);
  for (const axis of NUMERIC_AXES) compareNumber(axis, a[axis], b[axis], before.parameters, after.parameters, out);
  if (a["audience"] !== b["audience"]) {
    if (
      typeof a["audience"] === "string" &&
      typeof b["audience"] === "string" &&
      !hasPlaceholder(a["audience"]) &&
      !hasPlaceholder(b["audience"])
    ) {
      out.widening.push(difference("audience", { audience: b["audience"] }, {}, false, true));
      out.narrowing.push(difference("audience", { audience: a["audience"] }, {}, true, false));
    } else out.unknown.push("the audience changed in a way the diff does not compare");
  }
  const compared = new Set<string>(["scope", "policy", "audience", ...NUMERIC_AXES]);
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (!compared.has(key) && JSON.stringify(a[key]) !== JSON.stringify(b[key]))
      out.unknown.push(`the grant's \`${key}\` changed, which the diff does not compare`);
  }
  const scopeRest = (g: Readonly<Record<string, unknown>>) => JSON.stringify({ ...(g["scope"] as object), tool: undefined });
  if (scopeRest(a) !== scopeRest(b)) out.unknown.push("the grant's scope changed beyond its tools, which the diff does not compare");
  compareApproval(before, after, out);
  compareParameterSpecs(before, after, out);
  await comparePolicies(analyzer, before, after, out);
  return relationOf(out);
}

function relationOf(out: Partial): FamilyDiffResult {
  const { widening, narrowing } = out;
  if (out.unknown.length > 0) return { relation: "unknown", widening, narrowing, reason: out.unknown.join("; ") };
  const relation: Relation =
    widening.length > 0 ? (narrowing.length > 0 ? "incomparable" : "widens") : narrowing.length > 0 ? "narrows" : "equivalent";
  return { relation, widening, narrowing };
}

function difference(
  axis: string,
  input: Partial_<WitnessInput>,
  parameters: Record<string, number | string | boolean>,
  old: boolean,
  now: boolean,
): FamilyDifference {
  return { axis, input: { ...defaultInput(), ...input }, parameters, old, new: now };
}
type Partial_<T> = { [K in keyof T]?: T[K] };

function hasPlaceholder(text: string): boolean {
  return placeholdersIn(text).length > 0;
}

function scopeTools(grant: Readonly<Record<string, unknown>>): readonly string[] {
  const tools = (grant["scope"] as { tool?: unknown } | undefined)?.tool;
  return Array.isArray(tools) ? tools.map(String) : typeof tools === "string" ? [tools] : [];
}

/** A tool in the new scope and not the old is a widening; the reverse a narrowing. */
function compareTools(a: readonly string[], b: readonly string[], out: Partial): void {
  if ([...a, ...b].some(hasPlaceholder) && JSON.stringify(a) !== JSON.stringify(b)) {
    out.unknown.push("the tools changed and name a parameter, which the diff does not compare");
    return;
  }
  const added = b.find((t) => !a.includes(t));
  const removed = a.find((t) => !b.includes(t));
  if (added !== undefined) out.widening.push(difference("scope.tool", { tool: added }, {}, false, true));
  if (removed !== undefined) out.narrowing.push(difference("scope.tool", { tool: removed }, {}, true, false));
}

/** The values an axis can take: its literal, or the declared `min` and `max` of the parameter it names. */
function upperBound(
  value: unknown,
  specs: Readonly<Record<string, ParameterSpec>>,
): { max: number; min?: number; parameter?: string } | undefined {
  if (value === undefined) return { max: Number.POSITIVE_INFINITY };
  if (typeof value === "number") return { max: value, min: value };
  if (typeof value !== "string") return undefined;
  const uses = placeholdersIn(value);
  if (uses.length !== 1 || uses[0]!.start !== 0 || uses[0]!.end !== value.length) return undefined;
  const name = uses[0]!.name;
  const spec = Object.hasOwn(specs, name) ? specs[name] : undefined;
  if (spec === undefined || spec.type !== "int") return undefined;
  return { max: spec.max ?? Number.MAX_SAFE_INTEGER, ...(spec.min !== undefined ? { min: spec.min } : {}), parameter: name };
}

function compareNumber(
  axis: string,
  a: unknown,
  b: unknown,
  oldSpecs: Readonly<Record<string, ParameterSpec>>,
  newSpecs: Readonly<Record<string, ParameterSpec>>,
  out: Partial,
): void {
  const x = upperBound(a, oldSpecs);
  const y = upperBound(b, newSpecs);
  if (x === undefined || y === undefined) {
    if (JSON.stringify(a) !== JSON.stringify(b) || JSON.stringify(oldSpecs) !== JSON.stringify(newSpecs))
      out.unknown.push(`\`${axis}\` changed in a way the diff does not compare`);
    return;
  }
  // A raised minimum of a parameter refuses grants the old family made; a lowered one adds only grants weaker than one it made.
  if (x.parameter !== undefined && y.parameter !== undefined && (y.min ?? 0) > (x.min ?? 0))
    out.narrowing.push(difference(axis, {}, { [x.parameter]: x.min ?? 0 }, true, false));
  if (y.max > x.max) out.widening.push(difference(axis, {}, y.parameter !== undefined ? { [y.parameter]: y.max } : {}, false, true));
  if (y.max < x.max) out.narrowing.push(difference(axis, {}, x.parameter !== undefined ? { [x.parameter]: x.max } : {}, true, false));
}

/** The budgets a family's grants can carry, for its approval rule: a literal (absent is 0), or an int parameter's declared range. */
function budgetRange(family: GrantFamilyBody): { min: number; max: number; parameter?: string } | undefined {
  const value = family.grant["budget_amount_minor"];
  if (value === undefined) return { min: 0, max: 0 };
  const bound = upperBound(value, family.parameters);
  if (bound === undefined) return undefined;
  return { min: Math.max(0, bound.min ?? 0), max: bound.max, ...(bound.parameter !== undefined ? { parameter: bound.parameter } : {}) };
}

/** Whether a grant with this budget is born waiting for a human's approval (`approvalRequired`'s rule). */
function needsApproval(approval: GrantFamilyBody["approval"], budget: number): boolean {
  if (approval === undefined) return false;
  return approval.required === true || (approval.above_budget_minor !== undefined && budget > approval.above_budget_minor);
}

/**
 * The approval axis: a grant the old family would have held for a human's approval and the new
 * one issues active is a widening (its witness: the budget that shows it, and an input without an
 * approver); the reverse a narrowing. Budgets are those both families can give; the rule is
 * monotone in the budget, so the smallest budget that needs approval on one side is the one to try.
 */
function compareApproval(before: GrantFamilyBody, after: GrantFamilyBody, out: Partial): void {
  const rule = (f: GrantFamilyBody) => JSON.stringify([f.approval?.required === true, f.approval?.above_budget_minor ?? null]);
  if (rule(before) === rule(after)) return;
  const x = budgetRange(before);
  const y = budgetRange(after);
  if (x === undefined || y === undefined) {
    out.unknown.push("the family's `approval` changed, and its budget is written in a way the diff does not compare");
    return;
  }
  const lo = Math.max(x.min, y.min);
  const hi = Math.min(x.max, y.max);
  const parameter = x.parameter ?? y.parameter;
  const check = (held: GrantFamilyBody, freed: GrantFamilyBody, old: boolean, list: FamilyDifference[]) => {
    const above = held.approval?.required === true ? lo : Math.max(lo, (held.approval?.above_budget_minor ?? Number.MAX_SAFE_INTEGER) + 1);
    if (above > hi || !needsApproval(held.approval, above) || needsApproval(freed.approval, above)) return;
    list.push(difference("approval", { approver: null }, parameter !== undefined ? { [parameter]: above } : {}, old, !old));
  };
  check(before, after, false, out.widening);
  check(after, before, true, out.narrowing);
}

/** The policy with each placeholder a symbol: `${limit}` reads `args.__family_parameter_limit`. */
function symbolic(template: string): string {
  return symbolicMapped(template).text;
}

/** `symbolic`, with a map from an offset in its text back to one in the template (inside a symbol: the placeholder's start, or its end). */
function symbolicMapped(template: string): { text: string; toTemplate: (offset: number) => number } {
  let text = "";
  let cursor = 0;
  const symbols: { at: number; end: number; start: number; stop: number }[] = [];
  for (const use of placeholdersIn(template)) {
    text += template.slice(cursor, use.start);
    const at = text.length;
    text += `args.${PARAMETER_PREFIX}${use.name}`;
    symbols.push({ at, end: text.length, start: use.start, stop: use.end });
    cursor = use.end;
  }
  text += template.slice(cursor);
  const toTemplate = (offset: number): number => {
    let shift = 0;
    for (const s of symbols) {
      if (offset <= s.at) break;
      if (offset < s.end) return s.stop;
      shift = s.stop - s.end;
    }
    return offset + shift;
  };
  return { text, toTemplate };
}

/** The proved warnings of a family's policy, for every value of its parameters within their declared bounds; spans are offsets in the policy template. */
export async function proveFamilyLint(analyzer: Analyzer, family: GrantFamilyBody, options: { until?: number } = {}): Promise<LintProof> {
  const template = family.grant["policy"];
  if (typeof template !== "string") return { diagnostics: [] };
  const assume = domains(analyzer.ctx, template, family.parameters);
  if (typeof assume === "string") return { diagnostics: [], unknown: assume };
  const { text, toTemplate } = symbolicMapped(template);
  let proof: LintProof;
  try {
    proof = await proveLintReport(analyzer, text, { assume, ...options });
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return {
      diagnostics: [],
      unknown: "the policy with its parameters as symbols does not check (a parameter stands where the solver needs a literal)",
    };
  }
  const diagnostics = proof.diagnostics.map((d) => ({
    ...d,
    span: { start: toTemplate(d.span.start), end: toTemplate(d.span.end) },
    help: `${d.help ?? "proved by the solver"}, for every value of the parameters within their declared bounds`,
  }));
  return { ...proof, diagnostics };
}

/**
 * The domain of each parameter the policy names, as its declaration bounds it. A string's pattern
 * is a regular expression for the solver where it lies in the subset the solver maps exactly;
 * one outside it is left out when the other side declares the same pattern (both sides then
 * range over the same larger set, which hides no difference) and makes the answer `unknown` when
 * it changed. So does a changed `max_length`: the evaluator counts UTF-16 units, the solver code points.
 */
function domains(
  c: Context<"main">,
  template: string,
  specs: Readonly<Record<string, ParameterSpec>>,
  other: Readonly<Record<string, ParameterSpec>> = specs,
): ArgDomain[] | string {
  const out: ArgDomain[] = [];
  for (const name of new Set(placeholdersIn(template).map((u) => u.name))) {
    const spec = Object.hasOwn(specs, name) ? specs[name]! : undefined;
    if (spec === undefined) return `the policy names an undeclared parameter \`${name}\``;
    const twin = Object.hasOwn(other, name) ? other[name] : undefined;
    const pattern = patternDomain(c, name, spec, twin);
    if (typeof pattern === "string") return pattern;
    out.push({
      path: [`${PARAMETER_PREFIX}${name}`],
      type: spec.type,
      ...(spec.min !== undefined ? { min: spec.min } : {}),
      ...(spec.max !== undefined ? { max: spec.max } : {}),
      ...(spec.enum !== undefined ? { oneOf: spec.enum } : {}),
      ...pattern,
    });
  }
  return out;
}

/** A string parameter's pattern and length for the solver, nothing when they need not be compared, or why they cannot be. */
function patternDomain(
  c: Context<"main">,
  name: string,
  spec: ParameterSpec,
  twin: ParameterSpec | undefined,
): { pattern?: string; maxLength?: number } | string {
  if (spec.type !== "string") return {};
  if (twin?.type === "string" && (twin.max_length ?? null) !== (spec.max_length ?? null))
    return `the \`max_length\` of parameter \`${name}\` changed, which the solver does not compare`;
  const maxLength = spec.max_length ?? FAMILY_LIMITS.stringParameterCharsMax;
  if (spec.pattern === undefined) return { maxLength };
  try {
    // A pattern that bounds its matches within `max_length` needs no length condition, which slows the solver's regular expressions.
    const longest = longestMatch(c, spec.pattern);
    return longest <= maxLength ? { pattern: spec.pattern } : { pattern: spec.pattern, maxLength };
  } catch (error) {
    if (!(error instanceof Unsupported)) throw error;
    if (twin?.type === "string" && twin.pattern === spec.pattern) return { maxLength };
    return `the pattern of parameter \`${name}\` changed, and ${error.message}`;
  }
}

/** The parameter values a witness carries, and the input without them. */
function split(input: WitnessInput): { input: WitnessInput; parameters: Record<string, number | string | boolean> } {
  const args: Record<string, unknown> = {};
  const parameters: Record<string, number | string | boolean> = {};
  for (const [k, v] of Object.entries(input.args)) {
    if (k.startsWith(PARAMETER_PREFIX)) parameters[k.slice(PARAMETER_PREFIX.length)] = v as number | string | boolean;
    else args[k] = v;
  }
  return { input: { ...input, args }, parameters };
}

/** Whether the family, given these parameter values, can be instantiated and its policy allows the input. */
function familyAllows(template: string, specs: Readonly<Record<string, ParameterSpec>>, witness: WitnessInput): boolean {
  const { input, parameters } = split(witness);
  for (const name of new Set(placeholdersIn(template).map((u) => u.name))) {
    const spec = Object.hasOwn(specs, name) ? specs[name] : undefined;
    if (spec === undefined || !Object.hasOwn(parameters, name) || checkParameter(name, spec, parameters[name]).length > 0) return false;
  }
  const compiled = compilePolicy(substituteText(template, parameters, "policy").text, { origin: "stored" });
  if (!compiled.ok) return false;
  const r = compiled.policy.evaluate(input);
  return r.ok && r.value;
}

/** The policy axis: both policies with their parameters as symbols within the declared bounds, diffed by the solver. */
async function comparePolicies(analyzer: Analyzer, before: GrantFamilyBody, after: GrantFamilyBody, out: Partial): Promise<void> {
  const ta = typeof before.grant["policy"] === "string" ? (before.grant["policy"] as string) : "true";
  const tb = typeof after.grant["policy"] === "string" ? (after.grant["policy"] as string) : "true";
  const da = domains(analyzer.ctx, ta, before.parameters, after.parameters);
  const db = domains(analyzer.ctx, tb, after.parameters, before.parameters);
  if (typeof da === "string" || typeof db === "string") {
    out.unknown.push(typeof da === "string" ? da : (db as string));
    return;
  }
  let result: DiffResult;
  try {
    result = await diffChecked(analyzer, checkedPolicy(symbolic(ta)), checkedPolicy(symbolic(tb)), {
      assume: { old: da, new: db },
      confirm: {
        widening: (x) => familyAllows(tb, after.parameters, x) && !familyAllows(ta, before.parameters, x),
        narrowing: (x) => familyAllows(ta, before.parameters, x) && !familyAllows(tb, after.parameters, x),
      },
    });
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    out.unknown.push("a policy with its parameters as symbols does not check (a parameter stands where the solver needs a literal)");
    return;
  }
  if (result.relation === "unknown") out.unknown.push(result.reason ?? "the solver could not tell");
  for (const d of result.widening) out.widening.push({ axis: "policy", ...split(d.input), old: false, new: true });
  for (const d of result.narrowing) out.narrowing.push({ axis: "policy", ...split(d.input), old: true, new: false });
}
