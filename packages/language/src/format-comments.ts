// The canonical form of a policy with `//` comments: each comment kept beside the operand it was at.
//
// The rules (docs/decisions/0121-comments-in-policies.md):
// - A policy without comments prints on one line, exactly as `formatExpr` prints it.
// - With comments, the top-level chain of `&&` (or `||`) prints one operand per line, each line
//   after the first starting with its operator, indented by two spaces; any other policy is one
//   operand.
// - A comment alone on its line leads: it prints on its own line before the operand that follows
//   it (after the last operand, at the end).
// - A comment after code on its line trails: it prints at the end of the line of the operand that
//   holds or precedes it; several trailing comments of one operand join, in order, on that line.
// - A hidden character in a comment prints as an escape (docs/decisions/0126-hidden-characters.md).
import { escapeHidden, type Span } from "@agent-authority/grammar";
import type { BinaryOperator, Expr } from "./ast.js";
import { formatExpr } from "./format.js";

interface Placed {
  readonly leading: string[];
  readonly trailing: string[];
}

/** The operands of the top-level chain of one associative operator, in source order. */
function topLevelChain(root: Expr): { op: BinaryOperator | undefined; operands: Expr[] } {
  if (root.kind !== "binary" || (root.op !== "&&" && root.op !== "||")) return { op: undefined, operands: [root] };
  const op = root.op;
  const operands: Expr[] = [];
  const stack: Expr[] = [root];
  while (stack.length > 0) {
    const e = stack.pop()!;
    if (e.kind === "binary" && e.op === op) stack.push(e.right, e.left);
    else operands.push(e);
  }
  return { op, operands };
}

/**
 * The comment's text without trailing blanks, its hidden characters escaped (INVARIANT
 * hidden-shown): a bidi override in a comment could make the code after it read as something
 * else. A comment is never empty (`//` at least).
 */
function commentText(text: string, span: Span): string {
  return escapeHidden(text.slice(span.start, span.end).replace(/[ \t]+$/, ""));
}

/** True when only blanks precede `offset` on its line. */
function ownLine(text: string, offset: number): boolean {
  const lineStart = Math.max(text.lastIndexOf("\n", offset - 1), text.lastIndexOf("\r", offset - 1)) + 1;
  return /^[ \t]*$/.test(text.slice(lineStart, offset));
}

/** Prints `root` with `comments` (spans into `text`) by the rules above. */
export function formatWithComments(text: string, root: Expr, comments: readonly Span[]): string {
  if (comments.length === 0) return formatExpr(root);
  const { op, operands } = topLevelChain(root);
  const placed: Placed[] = operands.map(() => ({ leading: [], trailing: [] }));
  const footer: string[] = [];
  for (const span of comments) {
    const comment = commentText(text, span);
    if (ownLine(text, span.start)) {
      const next = operands.findIndex((o) => o.span.start > span.start);
      if (next === -1) footer.push(comment);
      else placed[next]!.leading.push(comment);
    } else {
      let holder = 0;
      operands.forEach((o, i) => {
        if (o.span.start < span.start) holder = i;
      });
      placed[holder]!.trailing.push(comment);
    }
  }
  const lines: string[] = [];
  operands.forEach((operand, i) => {
    const indent = i === 0 ? "" : "  ";
    for (const c of placed[i]!.leading) lines.push(`${indent}${c}`);
    // Under `&&`, an `||` operand keeps its parentheses; nothing binds more loosely than `||`.
    const printed = formatExpr(operand);
    const wrapped = op === "&&" && operand.kind === "binary" && operand.op === "||" ? `(${printed})` : printed;
    const trailing = placed[i]!.trailing.length > 0 ? ` ${placed[i]!.trailing.join(" ")}` : "";
    lines.push(`${i === 0 ? "" : `${indent}${op} `}${wrapped}${trailing}`);
  });
  lines.push(...footer);
  return lines.join("\n");
}
