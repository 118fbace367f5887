// Loading the solver (Z3 as WebAssembly, imported only here and only when asked) and bounded calls to it.
import type { Bool, Context, Model } from "z3-solver";
import { ANALYSIS_LIMITS } from "./limits.js";
import { type Runtime, watchCallThreads } from "./threads.js";

/** One loaded solver: a Z3 context, its budgets, and the means to release its threads. */
export interface Analyzer {
  readonly ctx: Context<"main">;
  readonly budget: Budget;
  /** The context's work counter as last read: every question's meter charges what a call added to it. */
  readonly counter: WorkCounter;
  /** Ends the solver's worker threads, so that a process can exit: first a call still running is interrupted and every call's thread let end. The analyzer is unusable after. */
  close(): Promise<void>;
}

/**
 * The budgets of an analyzer's questions. Work is counted in the solver's own resource units
 * (Z3's `rlimit`), which do not depend on how busy the machine is, and in the process's CPU time
 * (where the solver spends time its units do not count, in strings chiefly), which depends on it
 * far less than the clock does: the same question gets the same answer on a quiet laptop and on a
 * loaded CI runner. The clock is only the ceiling above both, so that no question hangs.
 */
export interface Budget {
  readonly questionWork: number;
  readonly solverCallWork: number;
  readonly questionCpuMs: number;
  readonly solverCallCpuMs: number;
  readonly questionMs: number;
}

/** The context's resource count when a call of this analyzer last ended. */
export interface WorkCounter {
  seen: number;
}

/**
 * Loads Z3 (about half a second) and makes one context; the caller owns it and closes it. A
 * budget may be lowered below ANALYSIS_LIMITS (a test, an editor), never raised above it.
 */
export async function createAnalyzer(options: Partial<Budget> = {}): Promise<Analyzer> {
  const lowered = (name: keyof Budget): number => Math.min(options[name] ?? ANALYSIS_LIMITS[name], ANALYSIS_LIMITS[name]);
  const budget: Budget = {
    questionWork: lowered("questionWork"),
    solverCallWork: lowered("solverCallWork"),
    questionCpuMs: lowered("questionCpuMs"),
    solverCallCpuMs: lowered("solverCallCpuMs"),
    questionMs: lowered("questionMs"),
  };
  const z3 = await import("z3-solver");
  const api = await z3.init();
  api.setParam("memory_max_size", ANALYSIS_LIMITS.solverMemoryMegabytes);
  const ctx = new api.Context("main");
  const calls = watchCallThreads(api.em as Runtime);
  let closed = false;
  return {
    ctx,
    budget,
    counter: { seen: 0 },
    async close() {
      if (closed) return;
      closed = true;
      if (calls.running()) ctx.interrupt();
      await calls.ended();
      await z3.killThreads(api.em);
    },
  };
}

/** A solver's answer, a model with `sat`. */
export type Verdict =
  | { readonly kind: "sat"; readonly model: Model<"main"> }
  | { readonly kind: "unsat" }
  | { readonly kind: "unknown"; readonly reason: string };

/** What a meter still allows: solver units and milliseconds of CPU. */
interface Allowance {
  work: number;
  cpuMs: number;
}

/**
 * What is left of one question's budget, shared by all its calls: work and CPU time (charged
 * after each call with what it used) and a time past which nothing more is asked. A part of a
 * question (a witness brought to fewer names) gets a smaller meter that charges the question's too.
 */
export class Meter {
  private readonly own: Allowance;

  constructor(
    private readonly counter: WorkCounter,
    allowance: Allowance,
    readonly at: number,
    readonly perCall: Allowance,
    private readonly parent?: Meter,
  ) {
    this.own = { ...allowance };
  }

  /** What this meter and every meter above it still allow. */
  get left(): Allowance {
    const above = this.parent?.left ?? { work: Number.POSITIVE_INFINITY, cpuMs: Number.POSITIVE_INFINITY };
    return { work: Math.min(this.own.work, above.work), cpuMs: Math.min(this.own.cpuMs, above.cpuMs) };
  }

  /** A meter for a part of this question: at most `allowance`, and never more than the question has left. */
  part(allowance: Allowance): Meter {
    return new Meter(this.counter, allowance, this.at, this.perCall, this);
  }

  /** Charges a call's CPU time and what the context's work counter shows since it was last read. */
  charge(count: number, cpuMs: number): void {
    const work = Math.max(0, count - this.counter.seen);
    this.counter.seen = Math.max(this.counter.seen, count);
    for (let d: Meter | undefined = this; d !== undefined; d = d.parent) {
      d.own.work -= work;
      d.own.cpuMs -= cpuMs;
    }
  }
}

/** A question's meter: the analyzer's budget, and no time past `until` (as `Date.now()`) when given. */
export function meterFor(analyzer: Analyzer, until?: number): Meter {
  const { budget } = analyzer;
  const at = Math.min(Date.now() + budget.questionMs, until ?? Number.POSITIVE_INFINITY);
  const perCall = { work: budget.solverCallWork, cpuMs: budget.solverCallCpuMs };
  return new Meter(analyzer.counter, { work: budget.questionWork, cpuMs: budget.questionCpuMs }, at, perCall);
}

/** What `check` needs of a solver or an optimizer. */
export interface Checkable {
  set(key: string, value: number): void;
  check(...exprs: Bool<"main">[]): Promise<"sat" | "unsat" | "unknown">;
  model(): Model<"main">;
  reasonUnknown(): string;
  statistics(): Iterable<{ readonly key: string; readonly value: number }>;
}

/**
 * Checks `solver` under `extra` assumptions within the per-call budget and what is left of the
 * question's. Work is the solver's own limit; CPU time is watched by a timer that interrupts the
 * call past it; past the question's time the call is interrupted too, and answered `unknown` even
 * if the solver does not stop, so no call hangs.
 */
export async function check(ctx: Context<"main">, solver: Checkable, meter: Meter, extra: readonly Bool<"main">[] = []): Promise<Verdict> {
  const left = meter.left;
  const work = Math.min(left.work, meter.perCall.work);
  const cpuMs = Math.min(left.cpuMs, meter.perCall.cpuMs);
  const wallMs = meter.at - Date.now();
  if (work < 1 || cpuMs <= 0 || wallMs <= 0) return { kind: "unknown", reason: "the budget of the question ran out" };
  solver.set("rlimit", Math.floor(work));
  solver.set("timeout", Math.max(1, Math.floor(wallMs)));
  const started = process.cpuUsage();
  const spent = (): number => {
    const used = process.cpuUsage(started);
    return (used.user + used.system) / 1_000;
  };
  let why: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<"stopped">((resolve) => {
    timer = setInterval(() => {
      if (spent() > cpuMs) why ??= "its CPU time ran out";
      if (Date.now() > meter.at) why ??= "its time ran out";
      if (why === undefined) return;
      ctx.interrupt();
      // The solver is asked to stop; a call that does not within a second is left behind.
      if (Date.now() > meter.at + 1_000) resolve("stopped");
    }, CPU_WATCH_MS);
  });
  try {
    const answer = await Promise.race([solver.check(...extra), guard]);
    if (answer !== "stopped") meter.charge(workCount(solver), spent());
    if (answer === "sat") return { kind: "sat", model: solver.model() };
    if (answer === "unsat") return { kind: "unsat" };
    const reason = why ?? (answer === "unknown" && solver.reasonUnknown() !== "canceled" ? solver.reasonUnknown() : "its work ran out");
    return { kind: "unknown", reason: `the solver could not decide within its budget (${reason})` };
  } catch (error) {
    return { kind: "unknown", reason: `the solver failed: ${error instanceof Error ? error.message : String(error)}` };
  } finally {
    clearInterval(timer);
  }
}

/** How often a call's CPU time is read. */
const CPU_WATCH_MS = 20;

/** The context's resource count as a call's statistics report it (0 when they do not). */
function workCount(solver: Checkable): number {
  for (const entry of solver.statistics()) if (entry.key === "rlimit count") return Number(entry.value);
  return 0;
}
