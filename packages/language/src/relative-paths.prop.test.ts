// Property tests of relPathWithin and relPathNormalize on hostile relative paths: an accepted path
// normalizes as node:path (posix) does and never leaves its base; a refused one denies in a policy.
import { posix } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SAMPLE_ENVIRONMENT } from "../test-support/arbitraries.js";
import { compilePolicy } from "./index.js";
import { LIMITS } from "./limits.js";
import { normalizeRelativePath, relativePathWithin } from "./paths.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: the oracle names the control characters the path functions must refuse
const CONTROL_OR_BACKSLASH = /[\u0000-\u001f\u007f\\]/;

const params = (runs: number): fc.Parameters<unknown> => ({ numRuns: runs, seed: Number(process.env["FC_SEED"] ?? 20261126) });

const DIR = ".github/workflows";
const SEGMENTS = [
  ".github",
  "workflows",
  "workflows-old",
  "src",
  "x.yml",
  "..",
  ".",
  "",
  "...",
  "%2e%2e",
  "%2f",
  "a\\..\\b",
  "\u0000",
  "\n",
  "x y",
  "ü",
];

/** Hostile paths relative to a base, and a few absolute ones. */
const hostilePath = fc
  .tuple(fc.constantFrom("", "./", "/", "//", "src/", ".github/"), fc.array(fc.constantFrom(...SEGMENTS), { maxLength: 8 }), fc.boolean())
  .map(([lead, segments, trailing]) => lead + segments.join("/") + (trailing ? "/" : ""));

/** Where `path` lands under a base `/base`, as a tool resolving it there would. */
function landing(path: string): string {
  return posix.resolve("/base", path);
}

describe("relative path functions against node:path", () => {
  it("an accepted path normalizes as posix.normalize does and stays under its base; a refused one is hostile", () => {
    fc.assert(
      fc.property(hostilePath, (path) => {
        const n = normalizeRelativePath(path);
        if (n.ok) {
          const node = posix.normalize(path).replace(/\/$/, "");
          expect(n.value).toBe(node === "" ? "." : node);
          expect(landing(path) === "/base" || landing(path).startsWith("/base/")).toBe(true);
        } else {
          const climbs = !landing(path).startsWith("/base/") && landing(path) !== "/base";
          const hidden =
            CONTROL_OR_BACKSLASH.test(path) ||
            /%[0-9a-f]{2}/i.test(path) ||
            path.split("/").some((s) => s !== "" && s !== "." && s !== ".." && [...s].every((c) => c === "." || c === " "));
          expect(path === "" || path.startsWith("/") || climbs || hidden || posix.normalize(path).startsWith("../")).toBe(true);
        }
      }),
      params(3000),
    );
  });

  it("relPathWithin agrees with where the path lands, by whole segments", () => {
    fc.assert(
      fc.property(hostilePath, (path) => {
        const w = relativePathWithin(path, DIR);
        if (!w.ok) return;
        const land = landing(path);
        expect(w.value).toBe(land === `/base/${DIR}` || land.startsWith(`/base/${DIR}/`));
      }),
      params(3000),
    );
    expect(relativePathWithin(".github/workflows-old/x.yml", DIR)).toEqual({ ok: true, value: false });
    expect(relativePathWithin("src/../.github/workflows/x.yml", DIR)).toEqual({ ok: true, value: true });
    expect(relativePathWithin("anything/at/all", ".")).toEqual({ ok: true, value: true });
    expect(relativePathWithin("a", "../a").ok).toBe(false);
    expect(relativePathWithin("/etc/passwd", "etc").ok).toBe(false);
  });

  it("a path of pathBytesMax bytes is read, one byte more is refused", () => {
    const edge = "a".repeat(LIMITS.pathBytesMax);
    expect(normalizeRelativePath(edge)).toEqual({ ok: true, value: edge });
    expect(normalizeRelativePath(`${edge}a`)).toEqual({ ok: false, problem: `the path is longer than ${LIMITS.pathBytesMax} bytes` });
  });
});

describe("in a policy, a refused relative path fails closed", () => {
  const env = (args: Record<string, unknown>) => ({ ...SAMPLE_ENVIRONMENT, args });
  const inside = compilePolicy(`relPathWithin(args.path, "${DIR}")`);
  const outside = compilePolicy(`!relPathWithin(args.path, "${DIR}")`);

  it("neither the test nor its negation allows what the function refuses; an allowed outside path lands outside", () => {
    if (!inside.ok || !outside.ok) throw new Error("the policies compile");
    fc.assert(
      fc.property(hostilePath, (path) => {
        const a = inside.policy.decide(env({ path }));
        const b = outside.policy.decide(env({ path }));
        if (!normalizeRelativePath(path).ok) {
          expect(a.outcome).toBe("deny");
          expect(b.outcome).toBe("deny");
        }
        if (b.outcome === "allow") expect(landing(path).startsWith(`/base/${DIR}/`) || landing(path) === `/base/${DIR}`).toBe(false);
      }),
      params(1000),
    );
    const normalized = compilePolicy(`relPathNormalize(args.path) == ".github"`);
    expect(normalized.ok && normalized.policy.decide(env({ path: "src/./../.github/" })).outcome).toBe("allow");
  });
});
