// The fixed upper bounds of the language, in one frozen object with units last.
import { NESTING_DEPTH_MAX } from "@agent-authority/grammar";

export const LIMITS = Object.freeze({
  /** UTF-8 bytes of policy text. */
  policyBytesMax: 4096,
  /** Syntactic nesting: parentheses, brackets, call argument lists and prefix operators. */
  astDepthMax: NESTING_DEPTH_MAX as 64,
  /**
   * Depth of the expression tree: every operator and every list or call counts one level. A run
   * of `&&` (or `||`) is a balanced tree, so a chain of n operands counts about log2(n) levels;
   * `+`, `-` and `*` count one level each. Every walk over a tree is bounded by it
   * (docs/decisions/0116-balanced-chains-and-tree-depth.md).
   */
  expressionDepthMax: 256,
  /** Elements of a list literal, and of a list read from `args` at run time. */
  listElementsMax: 1024,
  /**
   * Candidate approvers tried when deciding `gated` (docs/decisions/0101, 0111). A policy that
   * could need more is refused when it is written (`approver-search-too-large`); past it, a
   * conjoined chain can still be gated on a witness found, but is never allowed.
   */
  approverCandidatesMax: 4096,
  /** Levels of lists within lists in a dynamic value read from `args` (the server accepts less). */
  valueDepthMax: 32,
  /** Candidates times residual nodes: atom tests one decision may make (docs/decisions/0111). */
  approverSearchStepsMax: 262_144,
  /** Steps of lint's implication, redundancy and contradiction checks; past it they stay silent (docs/decisions/0112). */
  lintStepsMax: 25_000,
  /**
   * Work units of one evaluation of one policy (docs/policy-language.md, "Cost"). A policy whose
   * static worst case exceeds it is refused when it is written (`policy-too-costly`); an
   * evaluation that reaches it at run time fails closed (`cost-exceeded`).
   */
  evaluationUnitsMax: 65_536,
  /** Work units of one whole decision: every policy of the delegation chain and their conjunction. */
  decisionUnitsMax: 262_144,
  /**
   * Bytes of the JSON of `args` the static estimate assumes at worst (the server's whole request
   * body is at most 64 KiB). Larger `args` are still bounded: by the run-time charge.
   */
  argsBytesMax: 65_536,
  /** UTF-8 bytes of a path given to `pathWithin`, `pathNormalize`, `relPathWithin` or `relPathNormalize` (Linux's PATH_MAX); longer fails closed. */
  pathBytesMax: 4096,
  /** UTF-8 bytes of a URL given to a `url…` function; longer fails closed. */
  urlBytesMax: 8192,
  /** Integers are JavaScript safe integers; anything outside fails (literal: compile time, arithmetic: run time). */
  integerMax: Number.MAX_SAFE_INTEGER,
  integerMin: Number.MIN_SAFE_INTEGER,
} as const);

/** The UTF-8 length of `text`, counted without allocating. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** The offset of the first code unit that lies past `bytesMax` UTF-8 bytes. */
export function utf8Cut(text: string, bytesMax: number): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const pair = unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    const width = unit < 0x80 ? 1 : unit < 0x800 ? 2 : pair ? 4 : 3;
    if (bytes + width > bytesMax) return i;
    bytes += width;
    if (pair) i++;
  }
  return text.length;
}
