// Loading the solver (Z3 as WebAssembly, imported only here and only when asked) and bounded calls to it.
import type { Bool, Context, Model, Solver } from "z3-solver";
import { ANALYSIS_LIMITS } from "./limits.js";

/** One loaded solver: a Z3 context, its time budgets, and the means to release its threads. */
export interface Analyzer {
  readonly ctx: Context<"main">;
  readonly budget: Budget;
  /** Ends the solver's worker threads, so that a process can exit. The analyzer is unusable after. */
  close(): Promise<void>;
}

/** The time budgets of an analyzer's questions, in milliseconds. */
export interface Budget {
  readonly questionMs: number;
  readonly solverCallMs: number;
}

/**
 * Loads Z3 (about half a second) and makes one context; the caller owns it and closes it. A
 * budget may be lowered below ANALYSIS_LIMITS (a test, an editor), never raised above it.
 */
export async function createAnalyzer(options: Partial<Budget> = {}): Promise<Analyzer> {
  const budget: Budget = {
    questionMs: Math.min(options.questionMs ?? ANALYSIS_LIMITS.questionMs, ANALYSIS_LIMITS.questionMs),
    solverCallMs: Math.min(options.solverCallMs ?? ANALYSIS_LIMITS.solverCallMs, ANALYSIS_LIMITS.solverCallMs),
  };
  const z3 = await import("z3-solver");
  const api = await z3.init();
  api.setParam("memory_max_size", ANALYSIS_LIMITS.solverMemoryMegabytes);
  const ctx = new api.Context("main");
  let closed = false;
  return {
    ctx,
    budget,
    async close() {
      if (closed) return;
      closed = true;
      await z3.killThreads(api.em);
    },
  };
}

/** A solver's answer, a model with `sat`. */
export type Verdict =
  | { readonly kind: "sat"; readonly model: Model<"main"> }
  | { readonly kind: "unsat" }
  | { readonly kind: "unknown"; readonly reason: string };

/** A deadline shared by every call of one question, and the budget of each call. */
export interface Deadline {
  readonly at: number;
  readonly callMs: number;
}

export function deadlineIn(budget: Budget): Deadline {
  return { at: Date.now() + budget.questionMs, callMs: budget.solverCallMs };
}

/** What `check` needs of a solver or an optimizer. */
export interface Checkable {
  set(key: string, value: number): void;
  check(...exprs: Bool<"main">[]): Promise<"sat" | "unsat" | "unknown">;
  model(): Model<"main">;
  reasonUnknown(): string;
}

/** A fresh solver with the per-call budget. */
export function newSolver(ctx: Context<"main">): Solver<"main"> {
  const solver = new ctx.Solver();
  solver.set("timeout", ANALYSIS_LIMITS.solverCallMs);
  return solver;
}

/**
 * Checks `solver` under `extra` assumptions within the per-call budget and what is left of the
 * question's; past either the answer is `unknown`, and a call that outlives its own timeout is
 * interrupted by a timer, so no call hangs.
 */
export async function check(
  ctx: Context<"main">,
  solver: Checkable,
  deadline: Deadline,
  extra: readonly Bool<"main">[] = [],
): Promise<Verdict> {
  const left = deadline.at - Date.now();
  if (left <= 0) return { kind: "unknown", reason: "the time budget of the question ran out" };
  const budget = Math.min(left, deadline.callMs);
  solver.set("timeout", Math.max(1, Math.floor(budget)));
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => {
      ctx.interrupt();
      resolve("timeout");
    }, budget + 1_000);
  });
  try {
    const answer = await Promise.race([solver.check(...extra), guard]);
    if (answer === "sat") return { kind: "sat", model: solver.model() };
    if (answer === "unsat") return { kind: "unsat" };
    const why = answer === "timeout" ? "timeout" : solver.reasonUnknown();
    return { kind: "unknown", reason: `the solver could not decide within its budget (${why})` };
  } catch (error) {
    return { kind: "unknown", reason: `the solver failed: ${error instanceof Error ? error.message : String(error)}` };
  } finally {
    clearTimeout(timer);
  }
}
