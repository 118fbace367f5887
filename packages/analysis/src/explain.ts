// "What would make this allow": for a refused input, the nearest input the policy allows, confirmed by the evaluator.
import type { Arith, Bool } from "z3-solver";
import type { PolicyEnvironment } from "@agent-authority/language";
import { allowsInput, checkedPolicy } from "./diff.js";
import { Encoder } from "./encode.js";
import { type EnvName, Inputs, type Sym, TAG } from "./inputs.js";
import { ANALYSIS_LIMITS } from "./limits.js";
import { type Analyzer, check, meterFor } from "./solver.js";
import { stringTerm, Unsupported } from "./strings.js";
import { readInput } from "./witness.js";

export type Explanation =
  | { readonly kind: "allowed" }
  | { readonly kind: "nearest"; readonly input: PolicyEnvironment; readonly changed: readonly string[] }
  | { readonly kind: "never" }
  | { readonly kind: "unknown"; readonly reason: string };

/**
 * The nearest input `text` allows to `input` (complete, `approver` present): the fewest names
 * changed, then the smallest change of each int, every other name kept as it was. `never` when
 * no input is allowed; the answer is checked by the evaluator before it is returned.
 */
export async function nearestAllowed(analyzer: Analyzer, text: string, input: PolicyEnvironment): Promise<Explanation> {
  const checked = checkedPolicy(text);
  if (allowsInput(checked.policy, input)) return { kind: "allowed" };
  const c = analyzer.ctx;
  const inputs = new Inputs(c);
  let allows: Bool<"main">;
  try {
    allows = new Encoder(inputs).allows(checked.ast);
  } catch (error) {
    if (error instanceof Unsupported) return { kind: "unknown", reason: `the analysis cannot encode ${error.message}` };
    throw error;
  }
  const names = inputs.names();
  const flags = names.map((n) => differsFrom(inputs, n, valueAt(input, n)));
  const opt = new c.Optimize();
  opt.add(...inputs.domain, allows);
  opt.minimize(c.Sum(c.Int.val(0), ...flags.map((f) => c.If(f, 1, 0) as Arith<"main">)));
  opt.minimize(c.Sum(c.Int.val(0), ...intChanges(inputs, input)));
  const meter = meterFor(analyzer);
  for (let attempt = 0; attempt < ANALYSIS_LIMITS.witnessAttemptsMax; attempt++) {
    const v = await check(c, opt, meter);
    if (v.kind === "unsat") return attempt === 0 ? { kind: "never" } : unconfirmed();
    if (v.kind === "unknown") return v;
    const changed = names.filter((_, i) => v.model.eval(flags[i]!, true).toString() === "true");
    const nearest = merged(input, readInput(inputs, v.model), changed);
    if (allowsInput(checked.policy, nearest)) return { kind: "nearest", input: nearest, changed };
    opt.add(c.Or(...flags.map((f) => (v.model.eval(f, true).toString() === "true" ? c.Not(f) : f)), c.Bool.val(false)));
  }
  return unconfirmed();
}

function unconfirmed(): Explanation {
  return {
    kind: "unknown",
    reason: "the solver's candidate inputs were not confirmed by the evaluator (the policy uses a function the analysis approximates)",
  };
}

/** The value of a name (`amount_minor`, `args.a.b`) in an input; an absent argument is null. */
function valueAt(input: PolicyEnvironment, name: string): unknown {
  if (!name.startsWith("args.")) return (input as unknown as Record<string, unknown>)[name] ?? null;
  let v: unknown = input.args;
  for (const key of name.split(".").slice(1)) {
    if (v === null || typeof v !== "object" || Array.isArray(v) || !Object.hasOwn(v, key)) return null;
    v = (v as Record<string, unknown>)[key];
  }
  return v ?? null;
}

/** Whether the symbolic name differs from `value`; a list or object is kept when its type is. */
function differsFrom(inputs: Inputs, name: string, value: unknown): Bool<"main"> {
  const c = inputs.ctx;
  const sym: Sym = name.startsWith("args.") ? inputs.args.get(name)! : inputs.env.get(name as EnvName)!;
  if (value === null) return sym.tag.neq(TAG.null);
  if (typeof value === "number" && Number.isSafeInteger(value)) return c.Not(c.And(sym.tag.eq(TAG.int), sym.int.eq(value)));
  if (typeof value === "string") return c.Not(c.And(sym.tag.eq(TAG.string), sym.str.eq(stringTerm(c, value))));
  if (typeof value === "boolean") return c.Not(c.And(sym.tag.eq(TAG.bool), sym.bool.eq(value)));
  return sym.tag.neq(Array.isArray(value) ? TAG.list : typeof value === "object" ? TAG.object : TAG.number);
}

/** The size of each int name's change, to minimise after the count of names. */
function intChanges(inputs: Inputs, input: PolicyEnvironment): Arith<"main">[] {
  const c = inputs.ctx;
  const out: Arith<"main">[] = [];
  for (const [name, sym] of inputs.env) {
    const was = (input as unknown as Record<string, unknown>)[name];
    if (typeof was !== "number") continue;
    const delta = sym.int.sub(was);
    out.push(c.If(delta.ge(0), delta, delta.neg()) as Arith<"main">);
  }
  return out;
}

/** `input` with the changed names taken from `found`: an argument made absent is removed, one made present is set (with objects on its way). */
function merged(input: PolicyEnvironment, found: PolicyEnvironment, changed: readonly string[]): PolicyEnvironment {
  const out = { ...input, args: structuredClone(input.args) as Record<string, unknown> } as unknown as Record<string, unknown>;
  for (const name of changed) {
    if (!name.startsWith("args.")) {
      out[name] = (found as unknown as Record<string, unknown>)[name];
      continue;
    }
    const path = name.split(".").slice(1);
    setPath(out["args"] as Record<string, unknown>, path, valueAt(found, name));
  }
  return out as unknown as PolicyEnvironment;
}

function setPath(root: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let at = root;
  for (const key of path.slice(0, -1)) {
    const next = Object.hasOwn(at, key) ? at[key] : undefined;
    if (next === null || next === undefined || typeof next !== "object" || Array.isArray(next)) {
      const made: Record<string, unknown> = {};
      Object.defineProperty(at, key, { value: made, enumerable: true, writable: true, configurable: true });
      at = made;
    } else at = next as Record<string, unknown>;
  }
  const last = path[path.length - 1]!;
  if (value === null) delete at[last];
  else Object.defineProperty(at, last, { value, enumerable: true, writable: true, configurable: true });
}
