// The language's functions: startsWith, endsWith and size exactly; lower, the path and URL functions, and what lists read from `args` do, as uninterpreted functions.
import type { Arith, Bool, Context, Expr, FuncDecl, Seq, Sort } from "z3-solver";
import { and, ite, not, or, tagIs } from "./logic.js";
import { constant, type Sym, type SymBuilder, TAG } from "./inputs.js";
import { Unsupported } from "./strings.js";

type B = Bool<"main">;

/**
 * Functions the solver may interpret as it likes, declared by name: a name declared twice in one
 * context is one function, so every policy of a question shares them. A proof holds for every
 * interpretation, the real one included; a witness is confirmed by the evaluator before it is shown.
 */
export function sharedFunctions(c: Context<"main">) {
  const I = c.Int.sort();
  const S = c.String.sort();
  const Bo = c.Bool.sort();
  const key = [I, I, S, Bo, I, I] as const;
  return {
    listEqErr: c.Function.declare("list_eq_err", I, I, Bo),
    listEqVal: c.Function.declare("list_eq_val", I, I, Bo),
    memberErr: c.Function.declare("member_err", ...key, Bo),
    memberVal: c.Function.declare("member_val", ...key, Bo),
    sizeErr: c.Function.declare("list_size_err", I, Bo),
    sizeVal: c.Function.declare("list_size_val", I, I),
    lower: c.Function.declare("lower", S, S),
  };
}
export type SharedFunctions = ReturnType<typeof sharedFunctions>;

/** What each path and URL function returns. */
const PATH_URL = Object.freeze({
  pathWithin: { result: "bool" },
  relPathWithin: { result: "bool" },
  urlWithin: { result: "bool" },
  pathNormalize: { result: "string" },
  relPathNormalize: { result: "string" },
  urlScheme: { result: "string" },
  urlHost: { result: "string" },
  urlPath: { result: "string" },
  urlPort: { result: "int" },
  fileUriPath: { result: "string" },
} as const);

/** The symbolic value of a call of `callee` on evaluated arguments. */
export function callFunction(encoder: SymBuilder, callee: string, args: readonly Sym[]): Sym {
  const c = encoder.c;
  const ok = and(c, ...args.map((a) => a.ok));
  const strings = and(c, ok, ...args.map((a) => tagIs(c, a.tag, TAG.string)));
  switch (callee) {
    case "startsWith":
      return encoder.boolean(strings, args[1]!.str.prefixOf(args[0]!.str));
    case "endsWith":
      return encoder.boolean(strings, args[1]!.str.suffixOf(args[0]!.str));
    case "size":
      return size(encoder, args[0]!);
    case "lower":
      return { ...constant(c, TAG.string), ok: strings, str: sharedFunctions(c).lower.call(args[0]!.str) as Seq<"main"> };
    default:
      return pathUrl(encoder, callee, args, strings);
  }
}

function size(encoder: SymBuilder, v: Sym): Sym {
  const c = encoder.c;
  if (v.elements !== undefined) return encoder.integer(v.ok, c.Int.val(v.elements.length));
  const f = sharedFunctions(c);
  const listSize = f.sizeVal.call(v.ref) as Arith<"main">;
  const isString = tagIs(c, v.tag, TAG.string);
  const ok = and(
    c,
    v.ok,
    or(c, isString, and(c, tagIs(c, v.tag, TAG.list), not(c, f.sizeErr.call(v.ref) as B), listSize.ge(0), listSize.le(1024))),
  );
  // A length is never outside the safe range: no range test, which the string solver could only search for in vain.
  return { ...constant(c, TAG.int), ok, int: ite(c, isString, v.str.length(), listSize) as Arith<"main"> };
}

/** An uninterpreted function of `arity` strings to `range`, applied to `strs`. */
function apply(c: Context<"main">, name: string, range: Sort<"main">, strs: readonly Seq<"main">[]): Expr<"main"> {
  const domain = strs.map(() => c.String.sort());
  const declare = c.Function.declare as (name: string, ...sorts: Sort<"main">[]) => FuncDecl<"main">;
  const f = declare(name, ...domain, range);
  return (f.call as (...args: Expr<"main">[]) => Expr<"main">)(...strs);
}

function pathUrl(encoder: SymBuilder, callee: string, args: readonly Sym[], strings: B): Sym {
  const c = encoder.c;
  const spec = PATH_URL[callee as keyof typeof PATH_URL];
  if (spec === undefined) throw new Unsupported(`the function \`${callee}\``);
  const strs = args.map((a) => a.str);
  const failed = apply(c, `${callee}_err`, c.Bool.sort(), strs) as B;
  const ok = and(c, strings, not(c, failed));
  if (spec.result === "bool") return encoder.boolean(ok, apply(c, `${callee}_val`, c.Bool.sort(), strs) as B);
  if (spec.result === "string")
    return { ...constant(c, TAG.string), ok, str: apply(c, `${callee}_val`, c.String.sort(), strs) as Seq<"main"> };
  const port = apply(c, `${callee}_val`, c.Int.sort(), strs) as Arith<"main">;
  // A port is a number from 0 to 65535: the one property of urlPort the encoding states.
  return encoder.integer(and(c, ok, port.ge(0), port.le(65535)), port);
}
