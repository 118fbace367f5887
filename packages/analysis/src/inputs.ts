// The symbolic input: one solver variable per name a policy reads, with the name's documented domain.
import type { Arith, Bool, Context, Seq } from "z3-solver";
import { ENVIRONMENT_TYPES, LIMITS, WEEKDAYS } from "@agent-authority/language";
import { stringTerm } from "./strings.js";

/** The run-time type of a value, as a number the solver can branch on. */
export const TAG = Object.freeze({ null: 0, int: 1, string: 2, bool: 3, list: 4, object: 5, number: 6 });

/** A symbolic value: whether evaluating it succeeded, its run-time type, and its payload by type. */
export interface Sym {
  readonly ok: Bool<"main">;
  readonly tag: Arith<"main">;
  readonly int: Arith<"main">;
  readonly str: Seq<"main">;
  readonly bool: Bool<"main">;
  /** The identity of an opaque value (a list or object from `args`, a number that is not a safe integer). */
  readonly ref: Arith<"main">;
  /** The elements of a list literal. */
  readonly elements?: readonly Sym[];
  /** A list literal of constants, by its canonical text (so that two equal literals are one value). */
  readonly literal?: string;
}

export type EnvName = keyof typeof ENVIRONMENT_TYPES;

/** The names of the environment in their documented order, `approver` included. */
export const ENV_NAMES = Object.keys(ENVIRONMENT_TYPES) as EnvName[];

/** The value of each name in the default action, from which a witness's distance is counted. */
export const DEFAULT_ACTION = Object.freeze({
  amount_minor: 0,
  currency: "",
  tool: "",
  approver: null,
  agent: "",
  principal: "",
  audience: "",
  uses: 0,
  spent_minor: 0,
  hour_utc: 0,
  weekday_utc: "mon",
} as const);

/** The variables of one question, shared by every policy in it, made on first use. */
export class Inputs {
  readonly env = new Map<EnvName, Sym>();
  readonly args = new Map<string, Sym>();
  readonly domain: Bool<"main">[] = [];

  constructor(readonly ctx: Context<"main">) {}

  /** The symbolic value of an environment name. */
  name(name: EnvName): Sym {
    const known = this.env.get(name);
    if (known !== undefined) return known;
    const made = this.makeName(name);
    this.env.set(name, made);
    return made;
  }

  /** The symbolic value of `args.<path>` (and, first, of each shorter path it lies under). */
  arg(path: readonly string[]): Sym {
    const key = pathKey(path);
    const known = this.args.get(key);
    if (known !== undefined) return known;
    const parent = path.length > 1 ? this.arg(path.slice(0, -1)) : undefined;
    const c = this.ctx;
    const v = `args${path.map((p) => `[${JSON.stringify(p)}]`).join("")}`;
    const sym = this.dynamic(v);
    this.domain.push(sym.tag.ge(TAG.null), sym.tag.le(TAG.number), safe(c, sym.int));
    if (parent !== undefined) this.domain.push(c.Implies(parent.tag.neq(TAG.object), sym.tag.eq(TAG.null)));
    this.args.set(key, sym);
    return sym;
  }

  /** Whether the name differs from its value in the default action (an `args` path: whether it is present). */
  differs(name: string): Bool<"main"> {
    const c = this.ctx;
    if (name.startsWith("args.")) return this.args.get(name)!.tag.neq(TAG.null);
    const sym = this.env.get(name as EnvName)!;
    const d = DEFAULT_ACTION[name as EnvName];
    if (d === null) return sym.tag.neq(TAG.null);
    return typeof d === "number" ? sym.int.neq(d) : c.Not(sym.str.eq(stringTerm(c, d)));
  }

  /** Every name made so far, environment names first, as they are written in an input. */
  names(): string[] {
    return [...ENV_NAMES.filter((n) => this.env.has(n)), ...[...this.args.keys()].sort()];
  }

  private makeName(name: EnvName): Sym {
    const c = this.ctx;
    const type = ENVIRONMENT_TYPES[name];
    if (type === "int") {
      const int = c.Int.const(name);
      this.domain.push(int.ge(0), int.le(name === "hour_utc" ? 23 : LIMITS.integerMax));
      return { ...constant(c, TAG.int), int };
    }
    if (type === "approver") {
      const sym = this.dynamic(name);
      this.domain.push(c.Or(sym.tag.eq(TAG.null), sym.tag.eq(TAG.string)));
      return sym;
    }
    const str = c.String.const(name);
    if (name === "weekday_utc") this.domain.push(c.Or(...WEEKDAYS.map((d) => str.eq(stringTerm(c, d)))));
    return { ...constant(c, TAG.string), str };
  }

  private dynamic(name: string): Sym {
    const c = this.ctx;
    return {
      ok: c.Bool.val(true),
      tag: c.Int.const(`${name}#tag`),
      int: c.Int.const(`${name}#int`),
      str: c.String.const(`${name}#str`),
      bool: c.Bool.const(`${name}#bool`),
      ref: c.Int.const(`${name}#ref`),
    };
  }
}

/** The key of an `args` path, as a policy writes it. */
export function pathKey(path: readonly string[]): string {
  return `args.${path.join(".")}`;
}

/** A value of a known run-time type whose payload is still to be filled in. */
export function constant(c: Context<"main">, tag: number): Sym {
  return {
    ok: c.Bool.val(true),
    tag: c.Int.val(tag),
    int: c.Int.val(0),
    str: c.String.val(""),
    bool: c.Bool.val(false),
    ref: c.Int.val(0),
  };
}

/** Whether `x` is a safe integer. */
export function safe(c: Context<"main">, x: Arith<"main">): Bool<"main"> {
  return c.And(x.ge(LIMITS.integerMin), x.le(LIMITS.integerMax));
}

/** What the functions' encoding needs of an encoder: its context and its result builders. */
export interface SymBuilder {
  readonly c: Context<"main">;
  boolean(ok: Bool<"main">, value: Bool<"main">): Sym;
  integer(ok: Bool<"main">, value: Arith<"main">): Sym;
}
