// A family parameter's pattern (RE2 syntax, matched against the whole value) as the solver's regular expression, for the subset it maps exactly.
import type { Bool, Context, Re, Seq } from "z3-solver";
import { ANALYSIS_LIMITS } from "./limits.js";
import { stringTerm, Unsupported } from "./strings.js";

type R = Re<"main">;

/** The longest string a pattern (or a part of it) matches; Infinity when it has no bound. */
type Longest = number;

/** A part of a pattern: its regular expression and its longest match. */
interface Part {
  readonly re: R;
  readonly long: Longest;
}

/** A set of code points: inclusive ranges. */
type Ranges = [number, number][];
/** A set of code points that is never changed. */
type FixedRanges = readonly (readonly [number, number])[];

const DIGIT: FixedRanges = [[0x30, 0x39]] as const;
const WORD: FixedRanges = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
] as const;
const SPACE: FixedRanges = [
  [0x09, 0x0a],
  [0x0c, 0x0d],
  [0x20, 0x20],
] as const;
const CONTROL: Readonly<Record<string, number>> = { n: 0x0a, t: 0x09, r: 0x0d, f: 0x0c, v: 0x0b };

/** Why the subset stops here; the answer is then `unknown` with it. */
function outside(pattern: string, what: string): Unsupported {
  return new Unsupported(`the pattern \`${pattern}\` (${what}, outside the subset the solver compares)`);
}

/**
 * Whether `value` matches the whole of `pattern`. The subset: literal characters, escaped
 * punctuation, `\n` `\t` `\r` `\f` `\v`, `\d` `\w` `\s` and their complements (ASCII, as RE2 has
 * them), `.` (any character but a line feed), classes with ranges (negated too), groups,
 * alternation, `*` `+` `?` `{n}` `{n,}` `{n,m}` (lazy or not: a match of the whole value does not
 * depend on it), and `^` first and `$` last. Anything else (flags, word boundaries, Unicode
 * classes, `\x` escapes, anchors elsewhere) throws `Unsupported`.
 */
export function matchesPattern(c: Context<"main">, value: Seq<"main">, pattern: string): Bool<"main"> {
  return c.InRe(value, new PatternParser(c, pattern).parse());
}

/** The most code points a string matching `pattern` holds (Infinity for a pattern with `*`, `+` or `{n,}`); the pattern lies in the subset. */
export function longestMatch(c: Context<"main">, pattern: string): Longest {
  const parser = new PatternParser(c, pattern);
  parser.parse();
  return parser.longest;
}

/** Throws `Unsupported` unless the pattern lies in the subset `matchesPattern` maps. */
export function checkPatternSubset(c: Context<"main">, pattern: string): void {
  new PatternParser(c, pattern).parse();
}

class PatternParser {
  private readonly chars: string[];
  private at = 0;

  constructor(
    private readonly c: Context<"main">,
    private readonly pattern: string,
  ) {
    this.chars = [...pattern];
    if (this.chars[0] === "^") this.chars.shift();
    const n = this.chars.length;
    let slashes = 0;
    while (slashes < n - 1 && this.chars[n - 2 - slashes] === "\\") slashes++;
    if (n > 0 && this.chars[n - 1] === "$" && slashes % 2 === 0) this.chars.pop();
  }

  /** The longest match, known once `parse` has run. */
  longest: Longest = 0;

  parse(): R {
    const { re, long } = this.alternation();
    if (this.at < this.chars.length) throw outside(this.pattern, `\`${this.chars[this.at]}\` where it stands`);
    this.longest = long;
    return re;
  }

  private peek(): string | undefined {
    return this.chars[this.at];
  }

  private alternation(): Part {
    const branches = [this.concatenation()];
    while (this.peek() === "|") {
      this.at++;
      branches.push(this.concatenation());
    }
    const long = Math.max(...branches.map((b) => b.long));
    return branches.length === 1 ? branches[0]! : { re: this.c.Union(...branches.map((b) => b.re)), long };
  }

  private concatenation(): Part {
    const parts: Part[] = [];
    for (let ch = this.peek(); ch !== undefined && ch !== "|" && ch !== ")"; ch = this.peek()) parts.push(this.repeated());
    if (parts.length === 0) return { re: this.c.Re.toRe(this.c.String.val("")), long: 0 };
    const long = parts.reduce((n, p) => n + p.long, 0);
    return parts.length === 1 ? parts[0]! : { re: this.c.ReConcat(...parts.map((p) => p.re)), long };
  }

  private repeated(): Part {
    let { re, long } = this.atom();
    for (let ch = this.peek(); ch === "*" || ch === "+" || ch === "?" || ch === "{"; ch = this.peek()) {
      this.at++;
      if (ch === "*" || ch === "+") {
        re = ch === "*" ? this.c.Star(re) : this.c.Plus(re);
        long = long === 0 ? 0 : Number.POSITIVE_INFINITY;
      } else if (ch === "?") re = this.c.Option(re);
      else ({ re, long } = this.counted({ re, long }));
      if (this.peek() === "?") this.at++;
    }
    return { re, long };
  }

  /** `{n}`, `{n,}` or `{n,m}`, the `{` read. */
  private counted({ re, long }: Part): Part {
    const close = this.chars.indexOf("}", this.at);
    const body = close < 0 ? "" : this.chars.slice(this.at, close).join("");
    const m = /^(\d{1,4})(,(\d{0,4}))?$/.exec(body);
    if (m === null) throw outside(this.pattern, "a repetition it does not read");
    this.at = close + 1;
    const lo = Number(m[1]);
    const empty = this.c.Re.toRe(this.c.String.val(""));
    const unbounded = long === 0 ? 0 : Number.POSITIVE_INFINITY;
    if (m[2] === undefined) return { re: lo === 0 ? empty : this.c.Loop(re, lo, lo), long: long * lo };
    if (m[3] === "") return { re: lo === 0 ? this.c.Star(re) : this.c.ReConcat(this.c.Loop(re, lo, lo), this.c.Star(re)), long: unbounded };
    const hi = Number(m[3]);
    if (hi < lo) throw outside(this.pattern, "a repetition whose maximum is below its minimum");
    return { re: hi === 0 ? empty : this.c.Loop(re, lo, hi), long: long * hi };
  }

  private atom(): Part {
    const ch = this.chars[this.at++]!;
    if (ch === "(") {
      if (this.peek() === "?") {
        const named = /^\?P<[A-Za-z_][A-Za-z0-9_]*>/.exec(this.chars.slice(this.at, this.at + 40).join(""));
        if (this.chars[this.at + 1] === ":") this.at += 2;
        else if (named !== null) this.at += [...named[0]].length;
        else throw outside(this.pattern, "a group with flags");
      }
      const inner = this.alternation();
      if (this.chars[this.at++] !== ")") throw outside(this.pattern, "an unclosed group");
      return inner;
    }
    if (ch === "[") return { re: this.ranges(this.classRanges()), long: 1 };
    if (ch === ".") return { re: this.ranges(complement([[0x0a, 0x0a]])), long: 1 };
    if (ch === "\\") return { re: this.ranges(this.escape(false)), long: 1 };
    if (ch === "^" || ch === "$") throw outside(this.pattern, "an anchor inside it");
    if (ch === "*" || ch === "+" || ch === "?" || ch === "{") throw outside(this.pattern, "a repetition of nothing");
    return { re: this.c.Re.toRe(stringTerm(this.c, ch)), long: 1 };
  }

  /** An escape, the backslash read: a class, a control character, or escaped punctuation. */
  private escape(inClass: boolean): Ranges {
    const ch = this.chars[this.at++];
    if (ch === undefined) throw outside(this.pattern, "a trailing backslash");
    const classes: Readonly<Record<string, FixedRanges>> = { d: DIGIT, w: WORD, s: SPACE };
    const lower = ch.toLowerCase();
    if (Object.hasOwn(classes, lower)) return ch === lower ? classes[lower]!.map(([a, b]) => [a, b]) : complement(classes[lower]!);
    if (Object.hasOwn(CONTROL, ch)) return [[CONTROL[ch]!, CONTROL[ch]!]];
    if (/^[\p{P}\p{S}]$/u.test(ch) && ch.codePointAt(0)! < 0x80) return [[ch.codePointAt(0)!, ch.codePointAt(0)!]];
    throw outside(this.pattern, `the escape \`\\${ch}\`${inClass ? " in a class" : ""}`);
  }

  /** A class, the `[` read: its ranges, complemented when it starts with `^`. */
  private classRanges(): Ranges {
    const negated = this.peek() === "^";
    if (negated) this.at++;
    const out: Ranges = [];
    let first = true;
    for (;;) {
      const ch = this.chars[this.at++];
      if (ch === undefined) throw outside(this.pattern, "an unclosed class");
      if (ch === "]" && !first) break;
      first = false;
      if (ch === "[" && this.peek() === ":") throw outside(this.pattern, "a named class");
      const lo = ch === "\\" ? this.escape(true) : [[ch.codePointAt(0)!, ch.codePointAt(0)!] as [number, number]];
      if (
        this.peek() === "-" &&
        this.chars[this.at + 1] !== "]" &&
        this.chars[this.at + 1] !== undefined &&
        lo.length === 1 &&
        lo[0]![0] === lo[0]![1]
      ) {
        this.at++;
        const end = this.chars[this.at++]!;
        const hi = end === "\\" ? this.escape(true) : [[end.codePointAt(0)!, end.codePointAt(0)!] as [number, number]];
        if (hi.length !== 1 || hi[0]![0] !== hi[0]![1] || hi[0]![0] < lo[0]![0]) throw outside(this.pattern, "a range it does not read");
        out.push([lo[0]![0], hi[0]![0]]);
      } else out.push(...lo);
    }
    return negated ? complement(out) : out;
  }

  /** One character from a set of ranges; a set above the solver's characters is cut to them. */
  private ranges(set: Ranges): R {
    const c = this.c;
    const kept = set.filter(([lo]) => lo <= ANALYSIS_LIMITS.codePointMax);
    if (kept.length === 0) return c.Diff(c.Re.toRe(c.String.val("a")), c.Re.toRe(c.String.val("a")));
    const one = (cp: number) => stringTerm(c, String.fromCodePoint(cp));
    const res = kept.map(([lo, hi]) => c.Range(one(lo), one(Math.min(hi, ANALYSIS_LIMITS.codePointMax))));
    return res.length === 1 ? res[0]! : c.Union(...res);
  }
}

/** The code points (up to U+10FFFF) outside `set`. */
function complement(set: FixedRanges): Ranges {
  const sorted = [...set].sort((a, b) => a[0] - b[0]);
  const out: Ranges = [];
  let next = 0;
  for (const [lo, hi] of sorted) {
    if (lo > next) out.push([next, lo - 1]);
    next = Math.max(next, hi + 1);
  }
  if (next <= 0x10ffff) out.push([next, 0x10ffff]);
  return out;
}
