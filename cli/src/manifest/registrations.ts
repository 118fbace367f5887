// Finds tool registrations in one source file and resolves their names statically, or says why not.
import { Node, SyntaxKind, type CallExpression, type Expression, type SourceFile, type Type } from "ts-morph";
import type { ToolKind } from "./hash.js";

/** Which call registered a tool. */
export type RegistrationCall = "tool" | "registerTool" | "guard";

/** A place in the agent's sources: a path relative to the scanned directory, 1-based line and column. */
export interface SourceLocation {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

export interface Registration extends SourceLocation {
  readonly name: string;
  readonly kind: ToolKind;
  readonly call: RegistrationCall;
}

export interface UnresolvedRegistration extends SourceLocation {
  readonly kind: ToolKind;
  readonly call: RegistrationCall;
  /** The source text of the name argument, as written. */
  readonly expression: string;
}

/** The calls that register tools, the argument holding the name, and the fewest arguments such a call has. */
const registrationCalls: Readonly<Record<RegistrationCall, { kind: ToolKind; nameArgument: number; argumentsMin: number }>> = {
  tool: { kind: "mcp", nameArgument: 0, argumentsMin: 2 },
  registerTool: { kind: "mcp", nameArgument: 0, argumentsMin: 2 },
  guard: { kind: "guard", nameArgument: 1, argumentsMin: 3 },
};

/** Literal values one name expression can take; a union of string literals yields each of them. */
const literalValuesMax = 64;

/** A low-level MCP handler that dispatches tool calls by name at run time, e.g. `setRequestHandler(CallToolRequestSchema, …)`. */
export interface DynamicDispatch extends SourceLocation {
  readonly expression: string;
}

/** Scans every call in the file; `file` is the path reported in locations. */
export function findRegistrations(
  source: SourceFile,
  file: string,
): { found: Registration[]; unresolved: UnresolvedRegistration[]; dispatches: DynamicDispatch[] } {
  const found: Registration[] = [];
  const unresolved: UnresolvedRegistration[] = [];
  const dispatches: DynamicDispatch[] = [];
  for (const call of source.getDescendantsOfKind(SyntaxKind.CallExpression)) {
    if (isToolCallHandler(call)) {
      const { line, column } = source.getLineAndColumnAtPos(call.getStart());
      dispatches.push({ file, line, column, expression: call.getExpression().getText() });
      continue;
    }
    const which = registrationCall(call);
    if (which === undefined) continue;
    const shape = registrationCalls[which];
    const argument = call.getArguments()[shape.nameArgument] as Expression;
    const { line, column } = source.getLineAndColumnAtPos(argument.getStart());
    const names = staticNames(argument);
    if (names === undefined) {
      unresolved.push({ file, line, column, kind: shape.kind, call: which, expression: argument.getText() });
      continue;
    }
    for (const name of names) found.push({ file, line, column, name, kind: shape.kind, call: which });
  }
  return { found, unresolved, dispatches };
}

/** `x.setRequestHandler(CallToolRequestSchema, …)`: the tools it serves are decided at run time. */
function isToolCallHandler(call: CallExpression): boolean {
  const callee = call.getExpression();
  if (!Node.isPropertyAccessExpression(callee) || callee.getName() !== "setRequestHandler") return false;
  const schema = call.getArguments()[0];
  if (schema === undefined) return false;
  const name = Node.isPropertyAccessExpression(schema) ? schema.getName() : Node.isIdentifier(schema) ? schema.getText() : "";
  return name === "CallToolRequestSchema";
}

/** `x.tool(name, …)`, `x.registerTool(name, …)`, `guard(grant, name, fn)` and `x.guard(grant, name, fn)`. */
function registrationCall(call: CallExpression): RegistrationCall | undefined {
  const callee = call.getExpression();
  let name: string;
  if (Node.isPropertyAccessExpression(callee)) name = callee.getName();
  else if (Node.isIdentifier(callee)) name = callee.getText();
  else return undefined;
  if (name !== "tool" && name !== "registerTool" && name !== "guard") return undefined;
  // Only the SDK's guard may be called bare; a bare `tool(…)` is some other function.
  if (name !== "guard" && !Node.isPropertyAccessExpression(callee)) return undefined;
  // `x.tool(…)` on something the type checker knows is not an MCP server (a logger, a map, an
  // object of the agent's own) registers nothing.
  if (name !== "guard" && Node.isPropertyAccessExpression(callee) && serverKind(callee.getExpression().getType(), 0) === "other")
    return undefined;
  const argumentsCount = call.getArguments().length;
  if (argumentsCount < registrationCalls[name].argumentsMin) return undefined;
  if (call.getArguments().some((argument) => Node.isSpreadElement(argument))) return undefined;
  return name;
}

/** How deep `serverKind` follows unions and base classes; deeper counts as unknown. */
const typeDepthMax = 8;

/**
 * Whether a receiver is an MCP server (`McpServer` or a class built on it), something else, or
 * unknown: \`any\`, or a type that rests on an unresolved one because the agent's dependencies are
 * not installed where the manifest is built. Unknown receivers still count, so nothing is missed.
 */
function serverKind(type: Type, depth: number): "mcp" | "other" | "unknown" {
  if (depth > typeDepthMax || type.isAny() || type.isUnknown()) return "unknown";
  const members: Type[] = type.isUnion() ? type.getUnionTypes() : type.isIntersection() ? type.getIntersectionTypes() : [type];
  if (members.length > 1) {
    const kinds = members.map((member) => serverKind(member, depth + 1));
    return kinds.includes("mcp") ? "mcp" : kinds.includes("unknown") ? "unknown" : "other";
  }
  if ((type.getSymbol() ?? type.getAliasSymbol())?.getName() === "McpServer") return "mcp";
  const bases = type.getBaseTypes().map((base) => serverKind(base, depth + 1));
  return bases.includes("mcp") ? "mcp" : bases.includes("unknown") ? "unknown" : "other";
}

/**
 * The names an expression statically evaluates to: a string literal, or anything whose type the
 * compiler knows to be a string literal or a union of them (a `const`, an `as const` member, an
 * imported constant, a string enum member). Anything else is unresolved: no guessing.
 */
function staticNames(expression: Expression): string[] | undefined {
  if (Node.isStringLiteral(expression) || Node.isNoSubstitutionTemplateLiteral(expression)) return [expression.getLiteralValue()];
  return literalStrings(expression.getType());
}

function literalStrings(type: Type): string[] | undefined {
  if (type.isStringLiteral()) return [String(type.getLiteralValue())];
  if (!type.isUnion()) return undefined;
  const members = type.getUnionTypes();
  if (members.length > literalValuesMax || !members.every((member) => member.isStringLiteral())) return undefined;
  return members.map((member) => String(member.getLiteralValue()));
}
