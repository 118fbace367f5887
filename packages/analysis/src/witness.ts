// Witnesses: an input read from a solver's model, the fewest names away from a default action, kept only when the evaluator confirms it.
import type { Bool, Model, Solver } from "z3-solver";
import type { PolicyEnvironment } from "@agent-authority/language";
import { DEFAULT_ACTION, ENV_NAMES, type Inputs, type Sym, TAG } from "./inputs.js";
import { ANALYSIS_LIMITS } from "./limits.js";
import { check, type Deadline, newSolver } from "./solver.js";
import { stringValue } from "./strings.js";

/** A complete input, as `authority eval --input` reads it, `approver` present. */
export type WitnessInput = PolicyEnvironment;

export type Search =
  | { readonly kind: "none" }
  | { readonly kind: "found"; readonly input: WitnessInput }
  | { readonly kind: "unknown"; readonly reason: string };

/** What a search asks: inputs satisfying `goal`, confirmed by `confirm`, preferring those that differ from `origin` in few names. */
export interface Question {
  readonly inputs: Inputs;
  readonly goal: Bool<"main">;
  /** Whether the evaluator agrees that the input is what the goal claims. */
  readonly confirm: (input: WitnessInput) => boolean;
  /** Per name, whether it differs from where the count starts (by default the default action). */
  readonly distance?: (name: string) => Bool<"main">;
}

/**
 * Searches for a confirmed witness: the smallest number of changed names for which the goal is
 * satisfiable, then a model there; a model the evaluator does not confirm is excluded and the
 * search tried again, at most ANALYSIS_LIMITS.witnessAttemptsMax times.
 */
export async function findWitness(q: Question, deadline: Deadline): Promise<Search> {
  const c = q.inputs.ctx;
  const names = q.inputs.names();
  const distance = q.distance ?? ((n: string) => q.inputs.differs(n));
  const flags = names.map(distance);
  const solver = newSolver(c);
  solver.add(...q.inputs.domain, q.goal);
  for (let attempt = 0; attempt < ANALYSIS_LIMITS.witnessAttemptsMax; attempt++) {
    const v = await check(c, solver, deadline);
    if (v.kind === "unsat") return attempt === 0 ? { kind: "none" } : unconfirmed();
    if (v.kind === "unknown") return v;
    const model = await fewestNames(solver, flags, v.model, deadline);
    const input = readInput(q.inputs, model);
    if (q.confirm(input)) return { kind: "found", input };
    solver.add(excluding(q.inputs, model));
  }
  return unconfirmed();
}

/**
 * A model with the fewest of `flags` true: from a first model, ask for one with fewer until
 * there is none, so that only the last call must prove a bound. Minimising spends at most one
 * call's budget, so the question keeps time for its other searches; past it, the fewest found so
 * far is kept (still a model of the goal, to be confirmed like any other).
 */
async function fewestNames(
  solver: Solver<"main">,
  flags: readonly Bool<"main">[],
  first: Model<"main">,
  deadline: Deadline,
): Promise<Model<"main">> {
  const c = solver.ctx;
  const budget: Deadline = { at: Math.min(deadline.at, Date.now() + deadline.callMs), callMs: deadline.callMs };
  let best = first;
  const countIn = (m: Model<"main">) => flags.filter((f) => m.eval(f, true).toString() === "true").length;
  for (let k = countIn(best) - 1; k >= 0; k = countIn(best) - 1) {
    const v = await check(c, solver, budget, [c.Sum(c.Int.val(0), ...flags.map((f) => c.If(f, c.Int.val(1), c.Int.val(0)))).le(k)]);
    if (v.kind !== "sat") break;
    best = v.model;
  }
  return best;
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
