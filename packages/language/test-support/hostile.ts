// fast-check generators of hostile policy text and hostile action values: deep and long nesting,
// long operator chains, many distinct atoms, prototype and unicode names, sizes near the limits.
import fc from "fast-check";

/** Every name a plain object answers from `Object.prototype`. */
export const PROTOTYPE_NAMES: readonly string[] = Object.freeze([
  "__proto__",
  "constructor",
  "hasOwnProperty",
  "isPrototypeOf",
  "propertyIsEnumerable",
  "toLocaleString",
  "toString",
  "valueOf",
  "__defineGetter__",
  "__defineSetter__",
  "__lookupGetter__",
  "__lookupSetter__",
]);

/** The policy text limit, in UTF-8 bytes. */
const BYTES_MAX = 4096;

/** Conditions that compile, over the environment, `args` and `approver`. */
const fineAtom = fc.constantFrom(
  "uses > 0",
  'tool == "a"',
  "args.x == 1",
  'approver == "a"',
  'approver in ["a", "b"]',
  'startsWith(approver, "fin-")',
  "amount_minor <= 5",
  "size(args.l) > 1",
  '"a" in args.l',
  'args.s == "é😀"',
  "args.a == args.b",
  "args.n + 1 > uses * 2",
  'lower(currency) == "eur"',
);

const prototypeAtom = fc
  .constantFrom(...PROTOTYPE_NAMES)
  .chain((name) =>
    fc.constantFrom(`${name} != null`, `${name} == 1`, `args.${name} == null`, `${name}(1)`, `args.x.${name} == 1`, `${name}.x == "y"`),
  );

/** Names and text outside ASCII: every one is a lexical error or a plain string. */
const unicodeAtom = fc.constantFrom(
  "tôol == 1",
  "ａrgs.x == 1",
  "args.ü == 1",
  "uses\u00a0> 1",
  'tool == "\u202e"',
  'tool == "\\u0000"',
  "uses > ٣",
);

/** `args.a<i> == <i>`: many distinct atoms. */
const distinctAtom = fc.nat({ max: 9_999 }).map((i) => `args.a${i} == ${i}`);

export const hostileAtom = fc.oneof(fineAtom, prototypeAtom, unicodeAtom, distinctAtom);

/** Parentheses, brackets or calls nested around the edge of the nesting limit. */
const deepNesting = fc
  .tuple(fc.integer({ min: 50, max: 80 }), fineAtom, fc.constantFrom("(", "[", "size(", "!("))
  .map(([n, atom, open]) => {
    const close = open === "[" ? "]" : ")";
    const inner = open === "[" ? "1" : open === "size(" ? "args.l" : atom;
    const body = `${open.repeat(n)}${inner}${close.repeat(n)}`;
    return open === "[" ? `1 in ${body}` : open === "size(" ? `${body} > 0` : body;
  });

/** Runs of prefix operators, the shape that once formatted past the nesting limit. */
const prefixChain = fc.tuple(fc.integer({ min: 1, max: 90 }), fc.constantFrom("-", "!", "- ", "-!", "!-")).map(([n, op]) => {
  const run = op.repeat(n);
  return op.includes("!") ? `${run}(uses > 0)` : `${run}1 < 5`;
});

/** One operator repeated up to the size limit: chains of `&&`, `||` and arithmetic. */
const longChain = fc
  .tuple(
    fc.constantFrom("&&", "||", " && ", " || ", "+", "-", "*"),
    fc.integer({ min: 2, max: 2_000 }),
    fc.constantFrom("uses > 0", "1", "args.n", 'approver == "a"', "true"),
  )
  .map(([op, n, operand]) => {
    const arithmetic = op === "+" || op === "-" || op === "*";
    const unit = arithmetic ? (operand === "1" || operand === "args.n" ? operand : "1") : operand;
    const count = Math.max(2, Math.min(n, Math.floor((BYTES_MAX - 8) / (unit.length + op.length))));
    const chain = Array.from({ length: count }, () => unit).join(op);
    return arithmetic ? `${chain} > 0` : chain;
  });

/** A string literal padded so the policy lands within a few bytes of 4 KiB, either side. */
const nearLimit = fc.tuple(fc.integer({ min: -6, max: 6 }), fc.constantFrom("a", "é", "😀")).map(([delta, unit]) => {
  const head = 'tool != "';
  const room = BYTES_MAX + delta - head.length - 1;
  const width = new TextEncoder().encode(unit).length;
  return `${head}${unit.repeat(Math.max(0, Math.floor(room / width)))}${"a".repeat(Math.max(0, room % width))}"`;
});

/** A compact policy that fits in 4 KiB but not once formatted with its spaces. */
const compactNearLimit = fc.integer({ min: 480, max: 520 }).map((n) =>
  Array.from({ length: n }, (_, i) => `uses>${i % 10}`)
    .join("&&")
    .slice(0, BYTES_MAX),
);

/** Well-formed pieces joined by random operators, grouped now and then. */
const combined = fc
  .array(fc.tuple(hostileAtom, fc.constantFrom(" && ", " || ", "&&", "||"), fc.boolean()), { minLength: 1, maxLength: 12 })
  .map((parts) => parts.map(([atom, op, group], i) => `${i === 0 ? "" : op}${group ? `(${atom})` : atom}`).join(""));

/** Text broken at random: a slice, or characters of the grammar spliced in. */
function mutated(source: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc
    .tuple(
      source,
      fc.nat(),
      fc.nat(),
      fc.string({ unit: fc.constantFrom("(", ")", "[", "]", "!", "-", "&", "|", '"', "\\", ",", ".", "=", " ", "x", "1"), maxLength: 6 }),
    )
    .map(([text, a, b, insert]) => {
      const at = text.length === 0 ? 0 : a % text.length;
      const cut = b % 3 === 0 ? text.length : Math.min(text.length, at + (b % 8));
      return text.slice(0, at) + insert + text.slice(cut);
    });
}

const wellShaped = fc.oneof(deepNesting, prefixChain, longChain, nearLimit, compactNearLimit, combined, hostileAtom);

/** Hostile policy text: the shapes above, as they are or broken, and arbitrary strings. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: wellShaped },
  { weight: 2, arbitrary: mutated(wellShaped) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 64 }) },
);

/** Policies that parse, for the formatter's laws: prefix chains, near-limit text and combinations. */
export const formattableText: fc.Arbitrary<string> = fc.oneof(prefixChain, longChain, nearLimit, compactNearLimit, combined, fineAtom);

/** Lists nested `levels` deep. */
export function nestedList(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = [value];
  return value;
}

/** Action arguments of every hostile kind: deep, long, cyclic, with own prototype names. */
export const hostileArgs: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.constant({}),
  fc.constant({ x: 1, n: 3, s: "é😀", l: ["a", "b"], a: [1, [2]], b: [1, [2]] }),
  fc.integer({ min: 0, max: 100_000 }).map((levels) => ({ a: nestedList(levels), b: nestedList(levels), l: nestedList(levels) })),
  fc.integer({ min: 1_020, max: 1_030 }).map((n) => ({
    l: Array.from({ length: n }, (_, i) => String(i)),
    a: Array.from({ length: n }, () => 0),
    b: Array.from({ length: n }, () => 0),
  })),
  fc.constant(JSON.parse('{"__proto__": 1, "constructor": "x", "toString": [1], "x": {"__proto__": {"y": 1}}}') as Record<string, unknown>),
  fc.constant(
    (() => {
      const cyclic: unknown[] = [];
      cyclic.push(cyclic);
      return { a: cyclic, b: cyclic, l: cyclic };
    })(),
  ),
);
