// The scan for module-level mutable state in the packages: its rules, run by no-module-state.test.ts.
import { Node, type Expression, type SourceFile, SyntaxKind, type VariableDeclaration } from "ts-morph";

/**
 * What the scan finds, one line each: `path:line name: rule`. The rules, for every top-level
 * binding of a source file (a test file is not scanned):
 *
 * 1. `let` and `var` are forbidden: a module-level variable is state shared by every caller.
 * 2. A `const` that holds a container must hold it read-only. An object or array literal must be
 *    `Object.freeze`d, `as const`, or declared with a read-only type (`readonly T[]`,
 *    `Readonly<…>`, `ReadonlyMap<…>`, …); a `new Map`/`new Set` must be declared `ReadonlyMap`/
 *    `ReadonlySet`; a `WeakMap`, `WeakSet`, array, typed array, `Date` or instance of any other
 *    class is forbidden (its methods change it whatever its type says), and so is a regular
 *    expression with the `g` or `y` flag (it keeps `lastIndex`). The values inside a frozen or
 *    read-only literal are held to the same rule, so `Object.freeze({ cache: new Map() })` fails.
 * 3. A static field of a top-level class is module-level state too: it must be `readonly`, and its
 *    value is held to rule 2.
 * 4. Nothing in the file writes through a top-level binding: no assignment, `++`/`--` or `delete`
 *    whose target starts at one (`x.a = …`, `x[k] += …`), and no call of a mutating method on one
 *    (`x.set(…)`, `x.push(…)`, …).
 *
 * A call's result is not inspected (`const x = make()`): the rule reads syntax, not types, and a
 * call that returns a fresh container is caught where that container is written to (rule 3) or
 * where it is declared, if at top level.
 */
export function moduleStateViolations(file: SourceFile, label: string): string[] {
  const out: string[] = [];
  const report = (node: Node, name: string, rule: string): void => {
    out.push(`${label}:${node.getStartLineNumber()} ${name}: ${rule}`);
  };
  const topLevel = new Set<VariableDeclaration>();
  for (const statement of file.getVariableStatements()) {
    const kind = statement.getDeclarationKind();
    for (const declaration of statement.getDeclarations()) {
      topLevel.add(declaration);
      const name = declaration.getName();
      if (kind !== "const") {
        report(declaration, name, `top-level \`${kind}\``);
        continue;
      }
      const initializer = declaration.getInitializer();
      if (initializer === undefined) continue;
      const annotation = declaration.getTypeNode()?.getText();
      const problem = containerProblem(initializer, annotation);
      if (problem !== undefined) report(declaration, name, problem);
    }
  }
  for (const declaration of file.getClasses()) {
    for (const property of declaration.getStaticProperties()) {
      if (!Node.isPropertyDeclaration(property)) continue;
      const name = `${declaration.getName() ?? "class"}.${property.getName()}`;
      if (!property.isReadonly()) {
        report(property, name, "a static field that is not `readonly`");
        continue;
      }
      const initializer = property.getInitializer();
      const problem = initializer === undefined ? undefined : containerProblem(initializer, property.getTypeNode()?.getText());
      if (problem !== undefined) report(property, name, problem);
    }
  }
  for (const node of file.getDescendants()) {
    const target = writtenTarget(node);
    if (target === undefined) continue;
    const declaration = rootDeclaration(target.expression);
    if (declaration !== undefined && topLevel.has(declaration)) report(node, declaration.getName(), target.rule);
  }
  return out;
}

/** Methods that change the array, Map or Set they are called on. */
const MUTATORS: ReadonlySet<string> = new Set([
  "set",
  "add",
  "delete",
  "clear",
  "push",
  "pop",
  "shift",
  "unshift",
  "splice",
  "sort",
  "reverse",
  "fill",
  "copyWithin",
]);

/** Classes whose instances are changed by their own methods, whatever their declared type. */
const ALWAYS_MUTABLE: ReadonlySet<string> = new Set([
  "WeakMap",
  "WeakSet",
  "Array",
  "Date",
  "ArrayBuffer",
  "SharedArrayBuffer",
  "DataView",
  "Int8Array",
  "Uint8Array",
  "Uint8ClampedArray",
  "Int16Array",
  "Uint16Array",
  "Int32Array",
  "Uint32Array",
  "Float32Array",
  "Float64Array",
  "BigInt64Array",
  "BigUint64Array",
]);

/** Type annotations that make a container read-only. */
const READONLY_TYPE = /^(readonly\s|Readonly<|ReadonlyArray<|ReadonlyMap<|ReadonlySet<)/;

/** Why `e`, the initializer of a top-level `const` annotated `annotation`, holds mutable state; undefined if it does not. */
function containerProblem(e: Expression, annotation: string | undefined): string | undefined {
  const readonlyType = annotation !== undefined && READONLY_TYPE.test(annotation);
  return valueProblem(e, readonlyType ? "readonly" : "plain", annotation);
}

/** `frozen`: inside `Object.freeze(…)` or a read-only type; `const`: inside `as const`. */
type Shelter = "plain" | "readonly" | "const";

function valueProblem(raw: Expression, shelter: Shelter, annotation: string | undefined): string | undefined {
  const e = unwrap(raw);
  if (Node.isAsExpression(e)) {
    const inner = e.getExpression();
    if (e.getTypeNode()?.getText() === "const") return valueProblem(inner, "const", undefined);
    return valueProblem(inner, shelter, undefined);
  }
  if (Node.isCallExpression(e) && e.getExpression().getText() === "Object.freeze") {
    const arg = e.getArguments()[0];
    return arg !== undefined && Node.isExpression(arg) ? valueProblem(arg, "readonly", undefined) : undefined;
  }
  if (Node.isObjectLiteralExpression(e)) {
    if (shelter === "plain") return "a mutable object literal (freeze it, or declare it `as const` or with a read-only type)";
    for (const property of e.getProperties()) {
      const value = Node.isPropertyAssignment(property)
        ? property.getInitializer()
        : Node.isSpreadAssignment(property)
          ? property.getExpression()
          : undefined;
      const problem = value === undefined ? undefined : valueProblem(value, shelter === "const" ? "const" : "plain", undefined);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  if (Node.isArrayLiteralExpression(e)) {
    if (shelter === "plain") return "a mutable array literal (freeze it, or declare it `as const` or with a read-only type)";
    for (const element of e.getElements()) {
      const value = Node.isSpreadElement(element) ? element.getExpression() : element;
      const problem = valueProblem(value, shelter === "const" ? "const" : "plain", undefined);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  if (Node.isRegularExpressionLiteral(e)) {
    const flags = e.getLiteralText().slice(e.getLiteralText().lastIndexOf("/") + 1);
    return /[gy]/.test(flags) ? "a regular expression with the `g` or `y` flag keeps `lastIndex`" : undefined;
  }
  if (Node.isNewExpression(e)) {
    const constructorName = e.getExpression().getText();
    if (constructorName === "RegExp") {
      const flags = e.getArguments()[1];
      return flags !== undefined && /[gy]/.test(flags.getText())
        ? "a regular expression with the `g` or `y` flag keeps `lastIndex`"
        : undefined;
    }
    if (constructorName === "Map" || constructorName === "Set") {
      const wanted = constructorName === "Map" ? "ReadonlyMap<" : "ReadonlySet<";
      return annotation?.startsWith(wanted) === true ? undefined : `a \`new ${constructorName}\` not declared \`${wanted}…>\``;
    }
    if (ALWAYS_MUTABLE.has(constructorName)) return `a \`new ${constructorName}\`, changed by its own methods`;
    return `an instance of \`${constructorName}\`, which may hold state`;
  }
  return undefined;
}

/** `e` without parentheses, `satisfies`, `!` and `<T>` casts (`as` is kept: `as const` matters). */
function unwrap(e: Expression): Expression {
  let x: Expression = e;
  for (;;) {
    if (Node.isParenthesizedExpression(x) || Node.isSatisfiesExpression(x) || Node.isNonNullExpression(x) || Node.isTypeAssertion(x))
      x = x.getExpression();
    else return x;
  }
}

/** The expression `node` writes through, and the rule it breaks; undefined when it writes nothing. */
function writtenTarget(node: Node): { expression: Expression; rule: string } | undefined {
  if (Node.isBinaryExpression(node)) {
    const operator = node.getOperatorToken().getKind();
    if (operator >= SyntaxKind.FirstAssignment && operator <= SyntaxKind.LastAssignment)
      return { expression: node.getLeft(), rule: "written to at module level" };
    return undefined;
  }
  if (Node.isPrefixUnaryExpression(node) || Node.isPostfixUnaryExpression(node)) {
    const operator = node.getOperatorToken();
    if (operator === SyntaxKind.PlusPlusToken || operator === SyntaxKind.MinusMinusToken)
      return { expression: node.getOperand(), rule: "written to at module level" };
    return undefined;
  }
  if (Node.isDeleteExpression(node)) return { expression: node.getExpression(), rule: "written to at module level" };
  if (Node.isCallExpression(node)) {
    const callee = node.getExpression();
    if (Node.isPropertyAccessExpression(callee) && MUTATORS.has(callee.getName()))
      return { expression: callee.getExpression(), rule: `changed by \`.${callee.getName()}(…)\`` };
  }
  return undefined;
}

/** The variable declaration that the leftmost name of `e` (`x` in `x.a[k].b`) refers to. */
function rootDeclaration(e: Expression): VariableDeclaration | undefined {
  let x: Node = e;
  for (;;) {
    if (
      Node.isPropertyAccessExpression(x) ||
      Node.isElementAccessExpression(x) ||
      Node.isParenthesizedExpression(x) ||
      Node.isNonNullExpression(x) ||
      Node.isAsExpression(x)
    )
      x = x.getExpression();
    else break;
  }
  if (!Node.isIdentifier(x)) return undefined;
  const declaration = x.getSymbol()?.getDeclarations()[0];
  return declaration !== undefined && Node.isVariableDeclaration(declaration) ? declaration : undefined;
}
