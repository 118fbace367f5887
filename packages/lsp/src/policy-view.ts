// A policy region parsed and typed, with placeholders standing as sample values, for hover.
import { type ParameterSpec, type ParameterValue, placeholdersIn, sampleValue, substituteText } from "@agent-authority/families";
import { checkPolicy, childrenOf, type Expr, parsePolicy, type Type } from "@agent-authority/language";
import type { ParameterDeclaration } from "./source.js";

/** A node of the policy with its type and its span in the policy text as written. */
export interface TypedNode {
  readonly expr: Expr;
  readonly type: Type | undefined;
  readonly start: number;
  readonly end: number;
}

/** The words for a basic type; a list is named by its element's words. */
const TYPE_WORDS = Object.freeze({
  int: "int",
  string: "string",
  bool: "bool",
  null: "null",
  dyn: "dynamic (checked at run time)",
  approver: "string or null",
  error: "unknown (the expression has an error)",
});

export function typeWords(type: Type | undefined): string {
  if (type === undefined) return "unknown";
  if (type.kind !== "list") return TYPE_WORDS[type.kind];
  return type.element === null ? "empty list" : `list of ${TYPE_WORDS[type.element.kind]}`;
}

/** A value of each parameter for type checking: its example, default or bound, else a plain value of its type. */
function samples(parameters: readonly ParameterDeclaration[]): Record<string, ParameterValue> {
  const out: Record<string, ParameterValue> = Object.create(null) as Record<string, ParameterValue>;
  for (const p of parameters) {
    const spec = p.spec as Partial<ParameterSpec> | null;
    if (spec === null || typeof spec !== "object") continue;
    const value = spec.type === undefined ? undefined : sampleValue(spec as ParameterSpec);
    out[p.name] = value ?? (spec.type === "int" ? 0 : spec.type === "bool" ? false : "");
  }
  return out;
}

/** The innermost node whose span holds `index` (an offset into the policy as written). */
export function nodeAt(policy: string, parameters: readonly ParameterDeclaration[], index: number): TypedNode | undefined {
  if (placeholdersIn(policy).some((u) => index >= u.start && index < u.end)) return undefined;
  const substituted = substituteText(policy, samples(parameters), "policy");
  const parsed = parsePolicy(substituted.text);
  if (!parsed.ok) return undefined;
  const { types } = checkPolicy(parsed.ast);
  const toTemplate = (offset: number): number => substituted.templateOffset(offset);
  let best: TypedNode | undefined;
  const visit = (e: Expr): void => {
    const start = toTemplate(e.span.start);
    const end = e.span.end > e.span.start ? toTemplate(e.span.end - 1) + 1 : start;
    if (index < start || index >= end) return;
    best = { expr: e, type: types.get(e), start, end };
    for (const child of childrenOf(e)) visit(child);
  };
  visit(parsed.ast);
  return best;
}
