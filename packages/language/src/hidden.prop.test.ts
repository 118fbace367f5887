// Hidden characters (Trojan Source): fmt and residual text never print one raw, the round trip
// still holds, lint warns exactly where one is, and a line separator cannot hide code in a comment.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hiddenCharacters } from "@agent-authority/grammar";
import { anyExpr, environment } from "../test-support/arbitraries.js";
import { formatExpr } from "./format.js";
import { parsePolicy } from "./parse.js";
import { compilePolicy, formatPolicy, lintPolicy } from "./index.js";

const params = (runs = 500): fc.Parameters<unknown> => ({ numRuns: runs, seed: Number(process.env["FC_SEED"] ?? 20261126) });

/** Characters an attacker hides: bidi controls, zero-width, separators, tags, lone surrogates, odd spaces. */
const HIDDEN = [
  "\u202e",
  "\u202d",
  "\u202a",
  "\u2066",
  "\u2067",
  "\u2068",
  "\u2069",
  "\u200e",
  "\u200f",
  "\u061c",
  "\u200b",
  "\u200c",
  "\u200d",
  "\u2060",
  "\ufeff",
  "\u00ad",
  "\u034f",
  "\u3164",
  "\ufe0f",
  "\u2028",
  "\u2029",
  "\u0085",
  "\u0080",
  "\u009f",
  "\u00a0",
  "\u2007",
  "\u3000",
  "\u{e0001}",
  "\u{e0041}",
  "\u{e0100}",
  "\ud800",
  "\udfff",
];
const hidden = fc.constantFrom(...HIDDEN);
/** Text with hidden characters among ordinary ones; no quote, backslash or line break (those end a raw string). */
const sneaky = fc
  .array(fc.oneof(hidden, fc.constantFrom("a", "b", "@", ".", " ", "é", "а")), { minLength: 1, maxLength: 10 })
  .map((parts) => parts.join(""));
const rawHidden = (text: string): string[] => hiddenCharacters(text).map((h) => text.slice(h.offset, h.offset + h.width));

describe("hidden characters", () => {
  it("fmt never prints one raw, in strings or comments, and its output is a fixed point with the same meaning", () => {
    fc.assert(
      fc.property(anyExpr, sneaky, sneaky, (tree, inString, inComment) => {
        const text = `${formatExpr(tree)} || tool == "${inString.replace(/[\u2028\u2029\u0085]/g, "")}" // ${inComment.replace(/[\u2028\u2029\u0085]/g, "")}\n`;
        const formatted = formatPolicy(text);
        if (!formatted.ok) return;
        expect(rawHidden(formatted.text)).toEqual([]);
        const again = formatPolicy(formatted.text);
        expect(again.ok && again.text).toBe(formatted.text);
        const before = parsePolicy(text);
        const after = parsePolicy(formatted.text);
        expect(before.ok && after.ok && formatExpr(after.ast)).toBe(before.ok && formatExpr(before.ast));
      }),
      params(),
    );
  });

  it("a string value round-trips through its printed form, which has no raw hidden character", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.oneof(hidden, fc.constantFrom("a", '"', "\\", "\n", "\t", "é")), maxLength: 12 }), (value) => {
        const printed = formatExpr({ kind: "string", value, span: { start: 0, end: 0 } });
        expect(rawHidden(printed)).toEqual([]);
        const parsed = parsePolicy(printed);
        expect(parsed.ok && parsed.ast.kind === "string" && parsed.ast.value).toBe(value);
      }),
      params(),
    );
  });

  it("residual text shown to approvers never holds one raw", () => {
    fc.assert(
      fc.property(fc.array(sneaky, { minLength: 1, maxLength: 3 }), environment, (approvers, env) => {
        const list = approvers.map((a) => `"${a.replace(/[\u2028\u2029\u0085]/g, "")}@example.com"`).join(", ");
        const compiled = compilePolicy(`amount_minor < 0 || approver in [${list}]`);
        if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics));
        const decided = compiled.policy.decide(env);
        expect(decided.outcome).toBe("gated");
        if (decided.outcome === "gated") expect(rawHidden(decided.residual)).toEqual([]);
        expect(rawHidden(compiled.policy.text)).toEqual([]);
      }),
      params(200),
    );
  });

  it("lint warns `hidden-character` at each run of them, exactly when the text has one", () => {
    fc.assert(
      fc.property(sneaky, fc.boolean(), (inner, inComment) => {
        const clean = inner.replace(/[\u2028\u2029\u0085]/g, "");
        const text = inComment ? `tool == "x" // ${clean}` : `tool == "${clean}"`;
        const warned = lintPolicy(text).filter((d) => d.code === "hidden-character");
        const raw = hiddenCharacters(text);
        expect(warned.length > 0).toBe(raw.length > 0);
        for (const h of raw) expect(warned.some((d) => d.span.start <= h.offset && h.offset < d.span.end)).toBe(true);
        for (const d of warned) expect(rawHidden(d.message)).toEqual([]);
      }),
      params(),
    );
  });

  it("a line separator ends a comment, and what follows it is refused, never hidden inside the comment", () => {
    fc.assert(
      fc.property(
        anyExpr,
        fc.constantFrom("\u2028", "\u2029", "\u0085"),
        fc.constantFrom("&& false", "|| true", "", " x"),
        (tree, separator, rest) => {
          const policy = formatExpr(tree);
          const text = `${policy} // note${separator}${rest}`;
          const parsed = parsePolicy(text);
          expect(parsed.ok).toBe(false);
          if (!parsed.ok) {
            const at = text.indexOf(separator, policy.length);
            expect(parsed.diagnostics.some((d) => d.code === "unexpected-character" && d.span.start === at)).toBe(true);
          }
        },
      ),
      params(300),
    );
  });

  it("warns `mixed-script` for a Cyrillic letter in a Latin word, and not for words of one script", () => {
    expect(lintPolicy('tool == "pаyments.transfer"').map((d) => d.code)).toEqual(["mixed-script"]);
    expect(lintPolicy('args.city == "Москва" || args.city == "Zürich" || args.note == "東京 tokyo"').map((d) => d.code)).toEqual([]);
    expect(lintPolicy('approver in ["cfo@exаmple.com"]').map((d) => d.code)).toContain("mixed-script");
  });
});
