// The checker's static types, structured as Cedar's are: a list type holds its element's type.

/** The kinds of type that hold no other type. */
export type BasicKind = "int" | "string" | "bool" | "null" | "dyn" | "approver" | "error";

/**
 * A type that holds no other. `dyn` is a value read from `args` (checked when used, at run time);
 * `approver` is `string | null`; `error` marks a subtree already reported.
 */
export interface Basic<K extends BasicKind> {
  readonly kind: K;
}

/** Any basic type: a union by kind, so that testing `kind` narrows it. */
export type BasicType = { [K in BasicKind]: Basic<K> }[BasicKind];

/** What a list may hold: ints, strings or bools, one type per list. */
export type ElementType = Basic<"int"> | Basic<"string"> | Basic<"bool">;

/** A list; its `element` is null for the empty list literal, whose elements could be of any type. */
export interface ListType {
  readonly kind: "list";
  readonly element: ElementType | null;
}

export type Type = BasicType | ListType;

export type TypeKind = Type["kind"];

function basic<K extends BasicKind>(kind: K): Basic<K> {
  return Object.freeze({ kind });
}

/** One value of each basic type, so that checking allocates none. */
export const TYPES = Object.freeze({
  int: basic("int"),
  string: basic("string"),
  bool: basic("bool"),
  null: basic("null"),
  dyn: basic("dyn"),
  approver: basic("approver"),
  error: basic("error"),
});

const LISTS = Object.freeze({
  int: Object.freeze({ kind: "list", element: TYPES.int }),
  string: Object.freeze({ kind: "list", element: TYPES.string }),
  bool: Object.freeze({ kind: "list", element: TYPES.bool }),
  empty: Object.freeze({ kind: "list", element: null }),
} as const);

/** The type of a list of `element`, or of the empty list literal (null). */
export function listOf(element: ElementType | null): ListType {
  return element === null ? LISTS.empty : LISTS[element.kind];
}

/** Whether `t` is one of the element types (and so may stand in a list). */
export function isElementType(t: Type): t is ElementType {
  return t.kind === "int" || t.kind === "string" || t.kind === "bool";
}

/** Whether `a` and `b` are the same type, structurally. */
export function sameType(a: Type, b: Type): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind !== "list" || b.kind !== "list") return true;
  return a.element === null || b.element === null ? a.element === b.element : a.element.kind === b.element.kind;
}

/** A type as the checker's messages name it: `int`, `list of string`, `empty list`, … */
export function typeName(t: Type): string {
  switch (t.kind) {
    case "dyn":
      return "dynamic";
    case "approver":
      return "string or null";
    case "list":
      return t.element === null ? "empty list" : `list of ${t.element.kind}`;
    default:
      return t.kind;
  }
}
