// The CST parser of policy.ebnf: one CstParser subclass, one reused instance, and parseCst.
import type { CstNode, IToken, TokenType } from "chevrotain";
import { CstParser, EOF } from "./chevrotain.js";
import { spanOfLexingError, spanOfToken, type Span } from "./span.js";
import * as T from "./tokens.js";
import { policyLexer } from "./tokens.js";
import { codePointName, escapeHidden, EXTRA_LINE_TERMINATORS, isHidden } from "./hidden.js";

/**
 * Syntactic nesting is bounded before parsing so that recursion depth stays bounded for any input:
 * parentheses, brackets, call argument lists and prefix operators each count one level.
 */
export const NESTING_DEPTH_MAX = 64;

/** The parser: rules are class properties, so a misspelt rule name is a compile error. */
export class PolicyParser extends CstParser {
  constructor() {
    super(T.allTokens as TokenType[], { recoveryEnabled: false, maxLookahead: 1 });
    this.performSelfAnalysis();
  }

  public readonly policy = this.RULE("policy", () => {
    this.SUBRULE(this.expression);
  });

  /**
   * Operands separated by binary operators, flat: precedence and associativity (policy.ebnf, the
   * operator table) are applied when the AST is built. A flat rule keeps the parser fast: an
   * operand costs one rule call instead of one per precedence level.
   */
  public readonly expression = this.RULE("expression", () => {
    this.SUBRULE(this.operand, { LABEL: "operands" });
    this.MANY(() => {
      this.CONSUME(T.BinaryOperator, { LABEL: "operators" });
      this.SUBRULE2(this.operand, { LABEL: "operands" });
    });
  });

  /** The alternatives of an operand after its prefix operators, built once: chevrotain calls a rule's body on every parse. */
  private readonly operandAlternatives = [
    { ALT: () => this.CONSUME(T.Literal, { LABEL: "literal" }) },
    { ALT: () => this.SUBRULE(this.list) },
    {
      ALT: () => {
        this.CONSUME(T.LParen);
        this.SUBRULE(this.expression);
        this.CONSUME(T.RParen);
      },
    },
    {
      ALT: () => {
        this.CONSUME(T.Identifier, { LABEL: "name" });
        this.OPTION(() => this.SUBRULE(this.arguments));
        this.MANY2(() => {
          this.CONSUME(T.Dot);
          this.CONSUME2(T.Identifier, { LABEL: "path" });
        });
      },
    },
  ];

  /**
   * Prefix operators, then a literal, a list, a parenthesised expression, a call or a name. One
   * rule for all of it: every rule call costs, and an operand is what a policy has most of.
   */
  public readonly operand = this.RULE("operand", () => {
    this.MANY(() => {
      this.CONSUME(T.PrefixOperator, { LABEL: "prefix" });
    });
    this.OR(this.operandAlternatives);
  });

  public readonly list = this.RULE("list", () => {
    this.CONSUME(T.LBracket);
    this.OPTION(() => {
      this.SUBRULE(this.expression, { LABEL: "elements" });
      this.MANY(() => {
        this.CONSUME(T.Comma);
        this.SUBRULE2(this.expression, { LABEL: "elements" });
      });
    });
    this.CONSUME(T.RBracket);
  });

  public readonly arguments = this.RULE("arguments", () => {
    this.CONSUME(T.LParen);
    this.OPTION(() => {
      this.SUBRULE(this.expression, { LABEL: "values" });
      this.MANY(() => {
        this.CONSUME(T.Comma);
        this.SUBRULE2(this.expression, { LABEL: "values" });
      });
    });
    this.CONSUME(T.RParen);
  });
}

/** The one parser instance, reused for every parse (chevrotain parsers are built once and reset per input). */
export const policyParser = new PolicyParser();

/** A lexical error: a character no token starts with, or a string without its closing quote. */
export interface LexError {
  readonly code: "unexpected-character" | "unterminated-string";
  readonly message: string;
  readonly span: Span;
}

/** A syntax error, or input nested deeper than NESTING_DEPTH_MAX. */
export interface ParseError {
  readonly code: "unexpected-token" | "unexpected-end" | "nesting-too-deep";
  readonly message: string;
  readonly span: Span;
}

export interface CstResult {
  readonly cst: CstNode | undefined;
  readonly tokens: readonly IToken[];
  /** The `//` comments, in source order; the parser never sees them. */
  readonly comments: readonly Span[];
  readonly lexErrors: readonly LexError[];
  readonly parseErrors: readonly ParseError[];
}

/** Lexes and parses `text` into a CST. Never throws: problems come back as values with spans. */
export function parseCst(text: string): CstResult {
  const lexed = policyLexer.tokenize(text);
  const lexErrors: LexError[] = [];
  for (const error of lexed.errors) {
    const span = spanOfLexingError(error);
    lexErrors.push({ code: "unexpected-character", message: unexpectedMessage(text.slice(span.start, span.end)), span });
  }
  const tokens = lexed.tokens;
  const comments = (lexed.groups["comments"] ?? []).map(spanOfToken);
  for (const token of tokens) {
    if (token.tokenType === T.UnterminatedString) {
      lexErrors.push({ code: "unterminated-string", message: "unterminated string", span: spanOfToken(token) });
    }
  }
  if (lexErrors.length > 0) return { cst: undefined, tokens, comments, lexErrors, parseErrors: [] };
  // Fewer tokens than levels cannot nest too deep, which spares the common short policy the scan.
  const tooDeep = tokens.length > NESTING_DEPTH_MAX ? nestingError(tokens) : undefined;
  if (tooDeep !== undefined) return { cst: undefined, tokens, comments, lexErrors, parseErrors: [tooDeep] };
  policyParser.input = tokens;
  let cst: CstNode | undefined;
  try {
    cst = policyParser.policy();
  } catch (error) {
    // Recovery is off and every rule is bounded, so this is unreachable for any input; if it ever
    // happens the text is refused rather than half-understood.
    const message = error instanceof Error ? error.message : String(error);
    return {
      cst: undefined,
      tokens,
      comments,
      lexErrors,
      parseErrors: [{ code: "unexpected-token", message, span: { start: 0, end: text.length } }],
    };
  }
  const parseErrors: ParseError[] = policyParser.errors.map((error) => syntaxError(error.token, text.length, tokens));
  return { cst: parseErrors.length > 0 ? undefined : cst, tokens, comments, lexErrors, parseErrors: parseErrors.slice(0, 1) };
}

/**
 * The message for characters no token matches. A hidden one is named by its code point, never
 * shown raw (INVARIANT hidden-shown); a line separator says why it is refused.
 */
function unexpectedMessage(found: string): string {
  const first = found.codePointAt(0) ?? 0;
  if ((EXTRA_LINE_TERMINATORS as readonly string[]).includes(String.fromCodePoint(first))) {
    return `unexpected line separator ${codePointName(first)}: editors show a line break here, so outside a string it is refused; write a line feed`;
  }
  const noun = found.length === 1 ? "character" : "characters";
  if (isHidden(first)) return `unexpected hidden ${noun} \`${escapeHidden(found)}\` (${codePointName(first)})`;
  return `unexpected ${noun} \`${escapeHidden(found)}\``;
}

function syntaxError(token: IToken, textLength: number, tokens: readonly IToken[]): ParseError {
  if (token.tokenType === EOF || Number.isNaN(token.startOffset)) {
    // The policy ended inside parentheses or brackets: the innermost one left open is the mistake.
    const open = unclosed(tokens);
    if (open !== undefined) {
      const closer = open.tokenType === T.LParen ? ")" : "]";
      return {
        code: "unexpected-end",
        message: `\`${open.image}\` is never closed: the policy ends before its \`${closer}\``,
        span: spanOfToken(open),
      };
    }
    return { code: "unexpected-end", message: "unexpected end of policy", span: { start: textLength, end: textLength } };
  }
  return { code: "unexpected-token", message: `unexpected \`${token.image}\``, span: spanOfToken(token) };
}

/** The innermost `(` or `[` that no later token closes. */
function unclosed(tokens: readonly IToken[]): IToken | undefined {
  const stack: IToken[] = [];
  for (const token of tokens) {
    if (opens.has(token.tokenType)) stack.push(token);
    else if (closes.has(token.tokenType)) stack.pop();
  }
  return stack.at(-1);
}

const opens: ReadonlySet<unknown> = new Set<unknown>([T.LParen, T.LBracket]);
const closes: ReadonlySet<unknown> = new Set<unknown>([T.RParen, T.RBracket]);
/** Tokens after which a `-` is a prefix operator rather than a subtraction. */
const operandEnds: ReadonlySet<unknown> = new Set<unknown>([
  T.Identifier,
  T.Integer,
  T.StringLiteral,
  T.True,
  T.False,
  T.Null,
  T.RParen,
  T.RBracket,
]);

/**
 * The first token nested deeper than NESTING_DEPTH_MAX, as an error. Each open parenthesis or
 * bracket counts one level, and each prefix operator counts one level for what it applies to.
 */
function nestingError(tokens: readonly IToken[]): ParseError | undefined {
  const stack: number[] = [];
  let depth = 0;
  let pending = 0;
  let previous: unknown;
  for (const token of tokens) {
    const type = token.tokenType;
    const prefix = type === T.Bang || (type === T.Minus && !operandEnds.has(previous));
    let level = 0;
    if (prefix) {
      pending++;
      level = depth + pending;
    } else if (opens.has(type)) {
      stack.push(pending + 1);
      depth += pending + 1;
      pending = 0;
      level = depth;
    } else if (closes.has(type)) {
      depth = Math.max(0, depth - (stack.pop() ?? 0));
    } else if (operandEnds.has(type)) {
      level = depth + pending;
      pending = 0;
    }
    if (level > NESTING_DEPTH_MAX) {
      return { code: "nesting-too-deep", message: `nesting deeper than ${NESTING_DEPTH_MAX} levels`, span: spanOfToken(token) };
    }
    previous = type;
  }
  return undefined;
}
