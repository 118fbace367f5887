// Witnesses: an input read from a solver's model, the fewest names away from a default action, kept only when the evaluator confirms it.
import type { Bool, Model, Solver } from "z3-solver";
import type { PolicyEnvironment } from "@agent-authority/language";
import { DEFAULT_ACTION, ENV_NAMES, type EnvName, type Inputs, type Sym, TAG } from "./inputs.js";
import { ANALYSIS_LIMITS } from "./limits.js";
import { check, type Meter } from "./solver.js";
import { stringValue } from "./strings.js";

/** A complete input, as `authority eval --input` reads it, `approver` present. */
export type WitnessInput = PolicyEnvironment;

export type Search =
  | { readonly kind: "none" }
  | { readonly kind: "found"; readonly input: WitnessInput }
  | { readonly kind: "unknown"; readonly reason: string };

/** What a search asks: inputs satisfying `goal`, confirmed by `confirm`, preferring those that differ from the default action in few names. */
export interface Question {
  readonly inputs: Inputs;
  readonly goal: Bool<"main">;
  /** Whether the evaluator agrees that the input is what the goal claims. */
  readonly confirm: (input: WitnessInput) => boolean;
}

/**
 * Searches for a confirmed witness: a model of the goal, confirmed by the evaluator, then brought
 * to few changed names (see `fewestNames`); a model the evaluator does not confirm is excluded and
 * the search tried again, at most ANALYSIS_LIMITS.witnessAttemptsMax times.
 */
export async function findWitness(q: Question, meter: Meter): Promise<Search> {
  const c = q.inputs.ctx;
  const solver = new c.Solver();
  solver.add(...q.inputs.domain, q.goal);
  // A scope from the start: the solver then runs incrementally for every call of the search, the first included, rather than changing engines (and starting over) at the first call with assumptions.
  solver.push();
  for (let attempt = 0; attempt < ANALYSIS_LIMITS.witnessAttemptsMax; attempt++) {
    const v = await check(c, solver, meter);
    if (v.kind === "unsat") return attempt === 0 ? { kind: "none" } : unconfirmed();
    if (v.kind === "unknown") return v;
    const input = readInput(q.inputs, v.model);
    if (q.confirm(input)) return { kind: "found", input: await fewestNames(q, solver, input, meter) };
    solver.add(excluding(q.inputs, v.model));
  }
  return unconfirmed();
}

/**
 * A confirmed witness with few names away from the default action, from a confirmed one. First
 * each changed name is put back to its default where the evaluator still confirms the input (no
 * solver call); then, within ANALYSIS_LIMITS.witnessMinimiseWork and witnessMinimiseCpuMs and what is left of the question's
 * budget, the solver is asked for a witness with fewer changed names, until it proves there is
 * none (the fewest is then the minimum). Past the budget the fewest confirmed so far is kept.
 */
async function fewestNames(q: Question, solver: Solver<"main">, confirmed: WitnessInput, meter: Meter): Promise<WitnessInput> {
  const c = q.inputs.ctx;
  const names = q.inputs.names();
  const flags = names.map((n) => q.inputs.differs(n));
  const count = c.Sum(c.Int.val(0), ...flags.map((f) => c.If(f, c.Int.val(1), c.Int.val(0))));
  const budget = meter.part({ work: ANALYSIS_LIMITS.witnessMinimiseWork, cpuMs: ANALYSIS_LIMITS.witnessMinimiseCpuMs });
  let best = resetEach(q, names, confirmed);
  for (let k = changedNames(names, best) - 1; k >= 0; k = changedNames(names, best) - 1) {
    const v = await check(c, solver, budget, [count.le(k)]);
    if (v.kind !== "sat") break;
    const input = readInput(q.inputs, v.model);
    if (!q.confirm(input)) break;
    best = resetEach(q, names, input);
  }
  return best;
}

/** The input with each changed name (deepest `args` path first) put back to its default wherever the evaluator still confirms it. */
function resetEach(q: Question, names: readonly string[], input: WitnessInput): WitnessInput {
  let best = input;
  const order = [...names].sort((a, b) => b.split(".").length - a.split(".").length);
  for (const name of order) {
    if (!differsFromDefault(best, name)) continue;
    const candidate = withDefault(best, name);
    if (q.confirm(candidate)) best = candidate;
  }
  return best;
}

/** How many of `names` the input changes from the default action (an `args` path: how many are present). */
function changedNames(names: readonly string[], input: WitnessInput): number {
  return names.filter((n) => differsFromDefault(input, n)).length;
}

function differsFromDefault(input: WitnessInput, name: string): boolean {
  if (!name.startsWith("args.")) return (input as unknown as Record<string, unknown>)[name] !== DEFAULT_ACTION[name as EnvName];
  let at: unknown = input.args;
  for (const key of name.split(".").slice(1)) {
    if (at === null || typeof at !== "object" || Array.isArray(at) || !Object.hasOwn(at, key)) return false;
    at = (at as Record<string, unknown>)[key];
  }
  return true;
}

/** The input with one name at its default: an environment name set back, an `args` path removed. */
function withDefault(input: WitnessInput, name: string): WitnessInput {
  if (!name.startsWith("args.")) return { ...input, [name]: DEFAULT_ACTION[name as EnvName] };
  const args = structuredClone(input.args) as Record<string, unknown>;
  const path = name.split(".").slice(1);
  let at = args;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string, unknown>;
  delete at[path[path.length - 1]!];
  return { ...input, args };
}

function unconfirmed(): Search {
  return {
    kind: "unknown",
    reason: "the solver's candidate inputs were not confirmed by the evaluator (the policy uses a function the analysis approximates)",
  };
}

/** A constraint that rules out the model's values of the names the policies read. */
function excluding(inputs: Inputs, model: Model<"main">): Bool<"main"> {
  const c = inputs.ctx;
  const same: Bool<"main">[] = [];
  for (const sym of [...inputs.env.values(), ...inputs.args.values()]) {
    for (const part of [sym.tag, sym.int, sym.str, sym.bool, sym.ref] as const) same.push(part.eq(model.eval(part, true) as never));
  }
  return c.Not(c.And(...same));
}

/** The complete input a model describes: every name of the environment, `approver` included, and `args` built from the paths read. */
export function readInput(inputs: Inputs, model: Model<"main">): WitnessInput {
  const out: Record<string, unknown> = {};
  for (const name of ENV_NAMES) {
    const sym = inputs.env.get(name);
    out[name] = sym === undefined ? DEFAULT_ACTION[name] : scalarOf(model, sym, name === "approver");
  }
  out["args"] = argsOf(inputs, model);
  return out as unknown as WitnessInput;
}

function scalarOf(model: Model<"main">, sym: Sym, dynamic: boolean): unknown {
  if (dynamic) return jsonOf(model, sym);
  const tag = Number(model.eval(sym.tag, true).toString());
  return tag === TAG.int ? Number(model.eval(sym.int, true).toString()) : stringValue(model, sym.str);
}

/** A value read from `args`, as JSON: an opaque list is empty, an object is filled by its fields' paths, a non-integer number is 0.5. */
function jsonOf(model: Model<"main">, sym: Sym): unknown {
  const tag = Number(model.eval(sym.tag, true).toString());
  switch (tag) {
    case TAG.int:
      return Number(model.eval(sym.int, true).toString());
    case TAG.string:
      return stringValue(model, sym.str);
    case TAG.bool:
      return model.eval(sym.bool, true).toString() === "true";
    case TAG.list:
      return [];
    case TAG.object:
      return Object.create(null) as object;
    case TAG.number:
      return 0.5;
    default:
      return null;
  }
}

/** `args` as an object: each path read set where the model makes it present, shorter paths first. */
function argsOf(inputs: Inputs, model: Model<"main">): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  const keys = [...inputs.args.keys()].sort((a, b) => a.split(".").length - b.split(".").length);
  const values = new Map<string, unknown>();
  for (const key of keys) {
    const value = jsonOf(model, inputs.args.get(key)!);
    values.set(key, value);
    if (value === null) continue;
    const path = key.split(".").slice(1);
    const parent = path.length === 1 ? root : values.get(`args.${path.slice(0, -1).join(".")}`);
    if (parent === null || typeof parent !== "object" || Array.isArray(parent)) continue;
    Object.defineProperty(parent, path[path.length - 1]!, { value, enumerable: true, writable: true, configurable: true });
  }
  return root;
}
