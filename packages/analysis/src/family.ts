// The semantic diff of two grant families: each grant axis compared, family parameters symbolic within their declared bounds.
import { checkParameter, type GrantFamilyBody, type ParameterSpec, placeholdersIn, substituteText } from "@agent-authority/families";
import { compilePolicy } from "@agent-authority/language";
import { type ArgDomain, checkedPolicy, diffChecked, type DiffResult, type Relation } from "./diff.js";
import { DEFAULT_ACTION } from "./inputs.js";
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
  if (JSON.stringify(before.approval ?? null) !== JSON.stringify(after.approval ?? null))
    out.unknown.push("the family's `approval` changed, which the diff does not compare");
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

/** The policy with each placeholder a symbol: `${limit}` reads `args.__family_parameter_limit`. */
function symbolic(template: string): string {
  let out = "";
  let cursor = 0;
  for (const use of placeholdersIn(template)) {
    out += `${template.slice(cursor, use.start)}args.${PARAMETER_PREFIX}${use.name}`;
    cursor = use.end;
  }
  return out + template.slice(cursor);
}

function domains(template: string, specs: Readonly<Record<string, ParameterSpec>>): ArgDomain[] | string {
  const out: ArgDomain[] = [];
  for (const name of new Set(placeholdersIn(template).map((u) => u.name))) {
    const spec = Object.hasOwn(specs, name) ? specs[name]! : undefined;
    if (spec === undefined) return `the policy names an undeclared parameter \`${name}\``;
    out.push({
      path: [`${PARAMETER_PREFIX}${name}`],
      type: spec.type,
      ...(spec.min !== undefined ? { min: spec.min } : {}),
      ...(spec.max !== undefined ? { max: spec.max } : {}),
      ...(spec.enum !== undefined ? { oneOf: spec.enum } : {}),
    });
  }
  return out;
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

function sameStringRules(
  names: Iterable<string>,
  a: Readonly<Record<string, ParameterSpec>>,
  b: Readonly<Record<string, ParameterSpec>>,
): string | undefined {
  for (const name of names) {
    const x = Object.hasOwn(a, name) ? a[name] : undefined;
    const y = Object.hasOwn(b, name) ? b[name] : undefined;
    if (x?.type === "string" && y?.type === "string" && (x.pattern !== y.pattern || x.max_length !== y.max_length))
      return `the pattern of parameter \`${name}\` changed, which the solver does not compare`;
  }
  return undefined;
}

/** The policy axis: both policies with their parameters as symbols within the declared bounds, diffed by the solver. */
async function comparePolicies(analyzer: Analyzer, before: GrantFamilyBody, after: GrantFamilyBody, out: Partial): Promise<void> {
  const ta = typeof before.grant["policy"] === "string" ? (before.grant["policy"] as string) : "true";
  const tb = typeof after.grant["policy"] === "string" ? (after.grant["policy"] as string) : "true";
  const da = domains(ta, before.parameters);
  const db = domains(tb, after.parameters);
  const names = new Set([...placeholdersIn(ta), ...placeholdersIn(tb)].map((u) => u.name));
  const problem = typeof da === "string" ? da : typeof db === "string" ? db : sameStringRules(names, before.parameters, after.parameters);
  if (problem !== undefined || typeof da === "string" || typeof db === "string") {
    out.unknown.push(problem ?? "");
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
