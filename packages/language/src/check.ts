// Pipeline step 3 of 4: the type checker over the environment of docs/policy-language.md.
import type { Expr, ExprOf } from "./ast.js";
import { mentionsApprover } from "./ast.js";
import { error, type Diagnostic } from "./diagnostic.js";
import { ENVIRONMENT_NAMES, ENVIRONMENT_TYPE_OF, FUNCTION_ARITY_OF, FUNCTION_NAMES, type FunctionName } from "./environment.js";
import { notCallHint, unknownNameHint } from "./hints.js";
import { PATH_URL_FUNCTIONS } from "./paths.js";
import { didYouMean } from "./suggest.js";
import { isElementType, listOf, sameType, type Type, type TypeKind, typeName, TYPES } from "./types.js";

export type { Type } from "./types.js";

/**
 * The static type of each node of a checked tree. Each check owns its table: the tree is never
 * written to, so a tree shared by several policies (see `conjoin`) can be checked by each.
 */
export interface TypeTable {
  get(e: Expr): Type | undefined;
}

/**
 * One table over several: the first that knows a node answers (a conjunction built from checked
 * policies, and the types of its own new nodes).
 */
export function unionTable(tables: readonly TypeTable[]): TypeTable {
  return Object.freeze({
    get(e: Expr): Type | undefined {
      for (const table of tables) {
        const t = table.get(e);
        if (t !== undefined) return t;
      }
      return undefined;
    },
  });
}

export interface CheckResult {
  readonly types: TypeTable;
  readonly diagnostics: readonly Diagnostic[];
}

/**
 * Checks `root` and returns the type of every node. The policy must be a `bool` (or a dynamic
 * value, checked at run time).
 *
 * INVARIANT (approver-atoms): `approver` appears only as an operand of `==`/`!=`, as the left
 * operand of `in`, or as the first argument of `startsWith`/`endsWith`, compared with something
 * that does not mention `approver`; and a condition that mentions `approver` is combined only
 * with `!`, `&&` and `||`. Partial evaluation (residual.ts) relies on this to decide `gated` exactly.
 */
export function checkPolicy(root: Expr): CheckResult {
  const checker = new Checker();
  const type = checker.check(root, false);
  if (type.kind !== "bool" && type.kind !== "dyn" && type.kind !== "error") {
    checker.report(
      "type-mismatch",
      `a policy must be a condition, but this is \`${typeName(type)}\``,
      root,
      "compare it with something, as in `amount_minor <= 50000`",
    );
  }
  return { types: checker.types, diagnostics: checker.diagnostics };
}

/** The kinds of type an operand may have; `list` admits a list of any element type. */
const STRINGS: readonly TypeKind[] = ["string", "dyn"];
const STRINGS_OR_APPROVER: readonly TypeKind[] = ["string", "dyn", "approver"];
const SIZED: readonly TypeKind[] = ["string", "dyn", "list"];
const BOOLS: readonly TypeKind[] = ["bool", "dyn"];
const INTS: readonly TypeKind[] = ["int", "dyn"];

class Checker {
  readonly diagnostics: Diagnostic[] = [];
  readonly types = new Map<Expr, Type>();

  report(code: Diagnostic["code"], message: string, at: Expr | { span: Expr["span"] }, help?: string): Type {
    this.diagnostics.push(error(code, message, at.span, help));
    return TYPES.error;
  }

  /** The type of `e`; `approverHere` says that `approver` may stand at this position. */
  check(e: Expr, approverHere: boolean): Type {
    const type = this.infer(e, approverHere);
    this.types.set(e, type);
    return type;
  }

  private infer(e: Expr, approverHere: boolean): Type {
    switch (e.kind) {
      case "int":
        return TYPES.int;
      case "string":
        return TYPES.string;
      case "bool":
        return TYPES.bool;
      case "null":
        return TYPES.null;
      case "list":
        return this.list(e);
      case "name":
        return this.name(e, approverHere);
      case "call":
        return this.call(e);
      case "unary":
        return this.unary(e);
      case "binary":
        return this.binary(e);
    }
  }

  private list(e: ExprOf<"list">): Type {
    let element: Type | null = null;
    let failed = false;
    for (const item of e.elements) {
      const t = this.check(item, false);
      if (t.kind === "error") failed = true;
      else if (!isElementType(t)) {
        failed = true;
        this.report("list-element-type", `a list holds ints, strings or bools, not \`${typeName(t)}\``, item);
      } else if (element === null) element = t;
      else if (!sameType(t, element)) {
        failed = true;
        this.report(
          "list-element-type",
          `a list holds one type: this is \`${typeName(t)}\`, the first element is \`${typeName(element)}\``,
          item,
        );
      }
    }
    if (failed) return TYPES.error;
    return listOf(element !== null && isElementType(element) ? element : null);
  }

  private name(e: ExprOf<"name">, approverHere: boolean): Type {
    if (e.name === "args") {
      if (e.path.length === 0) return this.report("unknown-field", "`args` needs a field", e, "name an argument, as in `args.recipient`");
      return TYPES.dyn;
    }
    const kind = ENVIRONMENT_TYPE_OF.get(e.name);
    if (kind === undefined) {
      const hint = e.path.length === 0 ? unknownNameHint(e.name, e.span) : undefined;
      if (hint !== undefined) {
        this.diagnostics.push(hint);
        return TYPES.error;
      }
      return this.report("unknown-name", `unknown name \`${e.name}\``, e, didYouMean(e.name, ENVIRONMENT_NAMES));
    }
    if (e.path.length > 0) {
      return this.report("unknown-field", `\`${e.name}\` has no fields`, e, "only `args` has fields, as in `args.recipient`");
    }
    if (kind === "approver" && !approverHere) {
      return this.report(
        "approver-use",
        "`approver` can only be compared for equality, membership, prefix or suffix",
        e,
        'write `approver == "…"`, `approver != null`, `approver in […]`, `startsWith(approver, "…")` or `endsWith(approver, "…")`',
      );
    }
    return TYPES[kind];
  }

  /** Whether `e` is the bare name `approver`, allowed to stand here if `other` does not mention it. */
  private approverOperand(e: Expr, other: Expr | undefined): boolean {
    if (e.kind !== "name" || e.name !== "approver" || e.path.length > 0) return false;
    if (other !== undefined && mentionsApprover(other)) {
      this.report("approver-use", "`approver` can only be compared with something that does not mention it", other);
    }
    return true;
  }

  private call(e: ExprOf<"call">): Type {
    const arity = FUNCTION_ARITY_OF.get(e.callee);
    if (arity === undefined) {
      for (const a of e.args) this.check(a, false);
      const hint = e.args.length === 1 ? notCallHint(e.callee, e.calleeSpan) : undefined;
      if (hint !== undefined) {
        this.diagnostics.push(hint);
        return TYPES.error;
      }
      return this.report(
        "unknown-function",
        `unknown function \`${e.callee}\``,
        { span: e.calleeSpan },
        didYouMean(e.callee, FUNCTION_NAMES),
      );
    }
    if (e.args.length !== arity) {
      for (const a of e.args) this.check(a, false);
      return this.report("wrong-arity", `\`${e.callee}\` takes ${arity} argument${arity === 1 ? "" : "s"}, not ${e.args.length}`, e);
    }
    const fn = e.callee as FunctionName;
    if (fn === "startsWith" || fn === "endsWith") {
      const t0 = this.check(e.args[0]!, this.approverOperand(e.args[0]!, e.args[1]));
      const t1 = this.check(e.args[1]!, false);
      const ok0 = this.expect(e.args[0]!, t0, STRINGS_OR_APPROVER, fn, "takes a string");
      const ok1 = this.expect(e.args[1]!, t1, STRINGS, fn, "takes a string");
      return ok0 && ok1 ? TYPES.bool : TYPES.error;
    }
    const pathUrl = PATH_URL_FUNCTIONS.get(fn);
    if (pathUrl !== undefined) {
      const oks = e.args.map((a) => this.expect(a, this.check(a, false), STRINGS, fn, "takes a string"));
      return oks.every((ok) => ok) ? TYPES[pathUrl.result] : TYPES.error;
    }
    const t = this.check(e.args[0]!, false);
    if (fn === "size") {
      return this.expect(e.args[0]!, t, SIZED, "size", "takes a string or a list") ? TYPES.int : TYPES.error;
    }
    return this.expect(e.args[0]!, t, STRINGS, "lower", "takes a string") ? TYPES.string : TYPES.error;
  }

  /** Reports "`operator` takes …, not `t`" unless `t` is of one of the kinds `allowed` (or already an error). */
  private expect(e: Expr, t: Type, allowed: readonly TypeKind[], operator: string, takes: string): boolean {
    if (t.kind === "error") return false;
    if (allowed.includes(t.kind)) return true;
    this.report("type-mismatch", `\`${operator}\` ${takes}, not \`${typeName(t)}\``, e);
    return false;
  }

  private unary(e: ExprOf<"unary">): Type {
    const t = this.checkOperand(e.operand, e.op === "!");
    if (e.op === "!") return this.expect(e.operand, t, BOOLS, "!", "takes a condition") ? TYPES.bool : TYPES.error;
    return this.expect(e.operand, t, INTS, "-", "takes an int") ? TYPES.int : TYPES.error;
  }

  /**
   * Checks an operand; a condition that mentions `approver` may only be an operand of `!`, `&&`
   * or `||` (`logical`), see INVARIANT (approver-atoms).
   */
  private checkOperand(e: Expr, logical: boolean): Type {
    const t = this.check(e, false);
    if (!logical && t.kind === "bool" && mentionsApprover(e)) {
      return this.report("approver-use", "a condition on `approver` can only be combined with `!`, `&&` and `||`", e);
    }
    return t;
  }

  private binary(e: ExprOf<"binary">): Type {
    switch (e.op) {
      case "&&":
      case "||": {
        const l = this.checkOperand(e.left, true);
        const r = this.checkOperand(e.right, true);
        const okL = this.expect(e.left, l, BOOLS, e.op, "takes conditions");
        const okR = this.expect(e.right, r, BOOLS, e.op, "takes conditions");
        return okL && okR ? TYPES.bool : TYPES.error;
      }
      case "+":
      case "-":
      case "*": {
        const l = this.checkOperand(e.left, false);
        const r = this.checkOperand(e.right, false);
        const okL = this.expect(e.left, l, INTS, e.op, "takes ints");
        const okR = this.expect(e.right, r, INTS, e.op, "takes ints");
        return okL && okR ? TYPES.int : TYPES.error;
      }
      case "==":
      case "!=":
        return this.equality(e);
      case "in":
        return this.membership(e);
      default:
        return this.ordering(e);
    }
  }

  private equality(e: ExprOf<"binary">): Type {
    const leftIsApprover = this.approverOperand(e.left, e.right);
    const rightIsApprover = !leftIsApprover && this.approverOperand(e.right, e.left);
    const l = leftIsApprover ? this.check(e.left, true) : this.checkOperand(e.left, false);
    const r = rightIsApprover ? this.check(e.right, true) : this.checkOperand(e.right, false);
    if (l.kind === "error" || r.kind === "error") return TYPES.error;
    if (comparable(l, r)) return TYPES.bool;
    return this.report(
      "type-mismatch",
      `cannot compare \`${typeName(l)}\` with \`${typeName(r)}\``,
      e,
      "values of different types are never equal; only `null` compares with every type",
    );
  }

  private membership(e: ExprOf<"binary">): Type {
    const isApprover = this.approverOperand(e.left, e.right);
    const l = isApprover ? this.check(e.left, true) : this.checkOperand(e.left, false);
    const r = this.checkOperand(e.right, false);
    if (l.kind === "error" || r.kind === "error") return TYPES.error;
    if (r.kind !== "dyn" && r.kind !== "list")
      return this.report("type-mismatch", `\`in\` takes a list on its right, not \`${typeName(r)}\``, e.right);
    // `approver` is looked for as a string.
    const needle = l.kind === "approver" ? TYPES.string : l;
    if (needle.kind === "dyn" || r.kind === "dyn" || r.element === null) {
      if (needle.kind === "dyn" || isElementType(needle)) return TYPES.bool;
    } else if (sameType(needle, r.element)) return TYPES.bool;
    return this.report("type-mismatch", `cannot look for \`${typeName(l)}\` in \`${typeName(r)}\``, e);
  }

  private ordering(e: ExprOf<"binary">): Type {
    const l = this.checkOperand(e.left, false);
    const r = this.checkOperand(e.right, false);
    if (l.kind === "error" || r.kind === "error") return TYPES.error;
    const ordered = (t: Type): boolean => t.kind === "int" || t.kind === "string" || t.kind === "dyn";
    if (ordered(l) && ordered(r) && (l.kind === r.kind || l.kind === "dyn" || r.kind === "dyn")) return TYPES.bool;
    return this.report(
      "type-mismatch",
      `cannot order \`${typeName(l)}\` and \`${typeName(r)}\``,
      e,
      "ordering is defined on two ints or two strings",
    );
  }
}

/** Equality is defined on values of one type, and between `null` (or a dynamic value) and anything. */
function comparable(l: Type, r: Type): boolean {
  if (l.kind === "null" || r.kind === "null" || l.kind === "dyn" || r.kind === "dyn") return true;
  if ((l.kind === "approver" && r.kind === "string") || (l.kind === "string" && r.kind === "approver")) return true;
  // Two lists of one element type, or the empty list literal and any list.
  if (l.kind === "list" && r.kind === "list") return l.element === null || r.element === null || sameType(l, r);
  return l.kind === r.kind;
}
