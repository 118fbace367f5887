// The worst-case work of deciding `gated`, known from a policy's text before any action is seen.
import type { Expr } from "./ast.js";
import { error, type Diagnostic } from "./diagnostic.js";
import { LIMITS } from "./limits.js";

/** Bounds on partial evaluation of one policy, whatever the action holds. */
export interface ApproverCost {
  /** Nodes of the largest residual (INVARIANT (residual-size) of residual.ts, counted on the tree). */
  readonly residualNodes: number;
  /** Candidate approvers the search may try: equality constants, and prefix × suffix pairs. */
  readonly candidates: number;
  /** Candidates times residual nodes: the most atoms a decision may test. */
  readonly steps: number;
}

/**
 * Measures `root`. An `approver in l` with `l` not a list literal may bring LIMITS.listElementsMax
 * constants at run time, so it counts that many. Relies on INVARIANT (approver-atoms) of check.ts:
 * a node that mentions `approver` is `!`, `&&`, `||` or an atom.
 */
export function approverCost(root: Expr): ApproverCost {
  let equal = 0;
  let prefixes = 0;
  let suffixes = 0;
  const mentions = approverMentions(root);
  const nodes = (e: Expr): number => {
    if (!mentions.has(e)) return 1;
    if (e.kind === "unary") return 1 + nodes(e.operand);
    if (e.kind === "binary" && (e.op === "&&" || e.op === "||")) return 1 + nodes(e.left) + nodes(e.right);
    if (e.kind === "call") {
      if (e.callee === "startsWith") prefixes++;
      else suffixes++;
      return 1;
    }
    if (e.kind === "binary" && e.op === "in") {
      equal += e.right.kind === "list" ? e.right.elements.length : LIMITS.listElementsMax;
      return 3;
    }
    equal++;
    return 2;
  };
  const residualNodes = mentions.size === 0 ? 0 : nodes(root);
  const candidates = mentions.size === 0 ? 0 : equal + (prefixes + 1) * (suffixes + 1);
  return { residualNodes, candidates, steps: candidates * residualNodes };
}

/** The nodes of `root` that mention `approver`, found in one walk. */
function approverMentions(root: Expr): Set<Expr> {
  const out = new Set<Expr>();
  const visit = (e: Expr): boolean => {
    let found = false;
    switch (e.kind) {
      case "name":
        found = e.name === "approver";
        break;
      case "list":
        for (const x of e.elements) found = visit(x) || found;
        break;
      case "call":
        for (const x of e.args) found = visit(x) || found;
        break;
      case "unary":
        found = visit(e.operand);
        break;
      case "binary":
        found = visit(e.left);
        found = visit(e.right) || found;
        break;
      default:
        break;
    }
    if (found) out.add(e);
    return found;
  };
  visit(root);
  return out;
}

/**
 * The error for a policy whose decision could need more than the search limits: refused when it
 * is written, so that no decision is ever cut short by them.
 */
export function approverCostError(root: Expr, cost: ApproverCost = approverCost(root)): Diagnostic | undefined {
  if (cost.candidates <= LIMITS.approverCandidatesMax && cost.steps <= LIMITS.approverSearchStepsMax) return undefined;
  return error(
    "approver-search-too-large",
    `deciding who may approve this policy could try ${cost.candidates} approvers against ${cost.residualNodes} conditions, more than ${LIMITS.approverCandidatesMax} approvers or ${LIMITS.approverSearchStepsMax} tests`,
    root.span,
    "use fewer conditions on `approver`: fewer lists read from `args`, fewer `startsWith` and `endsWith` tests",
  );
}
