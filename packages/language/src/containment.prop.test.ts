// Property tests of containment where tools run: case-insensitive file systems, dot look-alikes,
// URLs that a back end decodes twice or cuts at `;`, and `file:` URIs; an answer holds in both polarities.
import { posix } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SAMPLE_ENVIRONMENT } from "../test-support/arbitraries.js";
import { compilePolicy } from "./index.js";
import { LIMITS } from "./limits.js";
import { fileUriPath, NFKC_SEPARATOR_RANGES, normalizePath, pathWithin, relativePathWithin, urlWithin } from "./paths.js";

const params = (runs: number): fc.Parameters<unknown> => ({ numRuns: runs, seed: Number(process.env["FC_SEED"] ?? 20261128) });
const env = (args: Record<string, unknown>) => ({ ...SAMPLE_ENVIRONMENT, args });

/** How Windows or macOS may read a segment: NFKC, no stream, no trailing dots or spaces, folded case. */
function caseInsensitiveName(segment: string): string {
  const n = segment.normalize("NFKC");
  const colon = n.indexOf(":");
  let name = colon < 0 ? n : n.slice(0, colon);
  while (name.endsWith(".") || name.endsWith(" ")) name = name.slice(0, -1);
  return name.toUpperCase().toLowerCase();
}

/** Whether `path` is under `dir` when every segment is read as caseInsensitiveName reads it (both already normalized). */
function withinIgnoringCase(path: string, dir: string): boolean {
  const p = path.split("/").filter((s) => s !== "");
  const d = dir.split("/").filter((s) => s !== "");
  return d.length <= p.length && d.every((s, i) => caseInsensitiveName(s) === caseInsensitiveName(p[i] ?? ""));
}

/** Whether `path` is under `dir`, both absolute and normalized, by whole segments. */
function withinExactly(path: string, dir: string): boolean {
  return dir === "/" || path === dir || path.startsWith(`${dir}/`);
}

/** Variants of a directory's segment that a case-insensitive file system reads as the segment. */
function variants(segment: string): fc.Arbitrary<string> {
  return fc.constantFrom(
    segment,
    segment.toUpperCase(),
    segment.slice(0, 1).toUpperCase() + segment.slice(1),
    `${segment}.`,
    `${segment} `,
    `${segment}. .`,
    `${segment}::$DATA`,
    `${segment}::$INDEX_ALLOCATION`,
    `${segment}:x`,
    segment.replace("s", "ſ"),
    segment.replace("k", "\u212a"),
    `${segment.toUpperCase().slice(0, 6)}~1`,
    `${segment}x`,
    "other",
  );
}

const DIR_SEGMENTS = [".github", "workflows"];
const LEAVES = ["x.yml", "a", "..", ".", "", "X.YML:evil", "...", ".. ", "．．", "\u2024\u2024", "café", "cafe\u0301"];

/** Relative paths made of case-insensitive variants of `.github/workflows`, then leaves. */
const variantPath = fc
  .tuple(...DIR_SEGMENTS.map(variants), fc.array(fc.constantFrom(...LEAVES), { maxLength: 3 }))
  .map(([a, b, rest]) => [a, b, ...rest].join("/"));

describe("containment on case-insensitive file systems", () => {
  const deny = compilePolicy('!(args.path != null && relPathWithin(args.path, ".github/workflows"))');
  const allow = compilePolicy('args.path != null && relPathWithin(args.path, ".github/workflows")');

  it("the documented bypasses of the deny-list are refused, and refused in both polarities", () => {
    if (!deny.ok || !allow.ok) throw new Error("the policies compile");
    const bypasses = [
      ".GITHUB/workflows/x.yml",
      ".github/Workflows/x.yml",
      ".github/workflows./x.yml",
      ".github/workflows /x.yml",
      ".github/workflows::$DATA/x.yml",
      ".github/workflows::$INDEX_ALLOCATION/x.yml",
      "GITHUB~1/WORKFL~1/x.yml",
      ".github\u200c/workflows/x.yml",
      ".github/workflowſ/x.yml",
      "C:/repo/.github/workflows/x.yml",
      "c:.github/workflows/x.yml",
    ];
    for (const path of bypasses) {
      expect(relativePathWithin(path, ".github/workflows").ok, path).toBe(false);
      expect(deny.policy.decide(env({ path })).outcome, path).toBe("deny");
      expect(allow.policy.decide(env({ path })).outcome, path).toBe("deny");
    }
    expect(deny.policy.decide(env({ path: "src/main.ts" })).outcome).toBe("allow");
    expect(deny.policy.decide(env({ path: ".GITHUB/README.md" })).outcome).toBe("allow");
    expect(deny.policy.decide(env({ path: ".github/workflows/x.yml" })).outcome).toBe("deny");
    expect(allow.policy.decide(env({ path: ".github/workflows/x.yml" })).outcome).toBe("allow");
  });

  it("an answer is the same read exactly and read as a case-insensitive file system reads it", () => {
    fc.assert(
      fc.property(variantPath, (path) => {
        const r = relativePathWithin(path, ".github/workflows");
        if (!r.ok) return;
        const landed = posix.normalize(`/base/${path}`);
        expect(r.value).toBe(withinExactly(landed, "/base/.github/workflows"));
        expect(r.value).toBe(withinIgnoringCase(landed, "/base/.github/workflows"));
      }),
      params(3000),
    );
  });

  it("a policy allows under neither polarity what some file system reads the other way", () => {
    if (!deny.ok || !allow.ok) throw new Error("the policies compile");
    fc.assert(
      fc.property(variantPath, (path) => {
        const landed = posix.normalize(`/base/${path}`);
        const readings = [withinExactly(landed, "/base/.github/workflows"), withinIgnoringCase(landed, "/base/.github/workflows")];
        if (deny.policy.decide(env({ path })).outcome === "allow") expect(readings).toEqual([false, false]);
        if (allow.policy.decide(env({ path })).outcome === "allow") expect(readings).toEqual([true, true]);
      }),
      params(2000),
    );
  });

  it("absolute paths follow the same rule", () => {
    expect(pathWithin("/TMP/notes/a", "/tmp/notes").ok).toBe(false);
    expect(pathWithin("/tmp/notes./a", "/tmp/notes").ok).toBe(false);
    expect(pathWithin("/tmp/notes/A", "/tmp/notes")).toEqual({ ok: true, value: true });
    expect(pathWithin("/tmp/café/a", "/tmp/cafe\u0301")).toMatchObject({ ok: false });
    expect(pathWithin("/srv/other/a", "/tmp/notes")).toEqual({ ok: true, value: false });
  });
});

describe("dot look-alikes and segments read as dots", () => {
  it("the look-alikes are refused wherever they stand", () => {
    for (const dots of [
      "．．",
      "\u2024\u2024",
      "\u2025",
      "\ufe52\ufe52",
      "\u3002\u3002",
      "a\uff0fb",
      "a\u2215b",
      "a\uff3cb",
      "...",
      ".. ",
      ". ",
    ]) {
      expect(normalizePath(`/tmp/notes/${dots}/x`).ok, dots).toBe(false);
      expect(pathWithin(`/tmp/notes/${dots}/x`, "/tmp/notes").ok, dots).toBe(false);
      expect(relativePathWithin(`notes/${dots}/x`, "notes").ok, dots).toBe(false);
    }
  });

  it("an accepted path reads the same after NFKC: no separator appears", () => {
    const chars = fc.constantFrom("a", ".", "/", "．", "\u2024", "ｂ", "é", "e\u0301", "\u00ad", "\u200b", "：", "~", "1", " ");
    fc.assert(
      fc.property(fc.array(chars, { maxLength: 12 }), (parts) => {
        const path = `/tmp/notes/${parts.join("")}`;
        const n = normalizePath(path);
        if (!n.ok) return;
        expect(posix.normalize(path.normalize("NFKC")).replace(/\/$/, "")).toBe(n.value.normalize("NFKC"));
      }),
      params(3000),
    );
  });
});

const API = "https://docs.example.com/api";

/** Every reading a back end might make of a URL's path: once or twice decoded, `;` parameters cut, NFKC. */
function backEndReadings(path: string): string[] {
  const out = [path];
  for (let i = 0; i < 2; i++) {
    try {
      out.push(decodeURIComponent(out[out.length - 1] ?? ""));
    } catch {
      break;
    }
  }
  const cut = out.map((p) =>
    p
      .split("/")
      .map((s) => s.split(";")[0] ?? "")
      .join("/"),
  );
  return [...out, ...cut].flatMap((p) => [p, p.normalize("NFKC")]).map((p) => posix.normalize(p));
}

describe("URLs a back end decodes again", () => {
  it("the documented escapes are refused", () => {
    for (const path of [
      "/api/%252e%252e/admin",
      "/api/..%252fadmin",
      "/api/..;/admin",
      "/api/..%3b/admin",
      "/api/x;y",
      "/api/%c0%ae%c0%ae/admin",
      "/api/%ef%bc%8e%ef%bc%8e/admin",
      "/api/..%20/admin",
    ])
      expect(urlWithin(`https://docs.example.com${path}`, API).ok, path).toBe(false);
    // The parser resolves `..` first: what is left is outside, whatever `;` would have meant.
    expect(urlWithin("https://docs.example.com/api;x/../admin", API)).toEqual({ ok: true, value: false });
    expect(urlWithin(`${API}/v1/pages?q=%25`, API)).toEqual({ ok: true, value: true });
  });

  it("an accepted URL under the prefix stays under it in every back end's reading", () => {
    const segment = fc.constantFrom(
      "..",
      ".",
      "admin",
      "%2e",
      "%252e%252e",
      "..;",
      ";",
      "%3b",
      "%25",
      "%c0%ae",
      "%ef%bc%8e",
      "..%2f",
      "．",
      "a%20b",
      "%e2%80%a4",
      "v1",
    );
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 6 }), (segments) => {
        const url = `${API}/${segments.join("/")}`;
        const r = urlWithin(url, API);
        if (!r.ok || !r.value) return;
        for (const reading of backEndReadings(new URL(url).pathname))
          expect(reading === "/api" || reading.startsWith("/api/"), reading).toBe(true);
      }),
      params(3000),
    );
  });
});

describe("file: URIs", () => {
  const root = "file:///srv/data";
  const attacks = [
    "file:///srv/data/../../etc/passwd",
    "file:///srv/data/%2e%2e/%2e%2e/etc/passwd",
    "file:///srv/data/%2E%2E/secret",
    "file:///srv/data/..%2f..%2fetc/passwd",
    "file:///srv/data/..%5c..%5cetc/passwd",
    "file:///srv/data/%252e%252e/etc/passwd",
    "file://evil.example/srv/data/x",
    "file:////srv/data/x",
    "file:///srv/data/x%00.txt",
    "file:///srv/data/%c0%ae%c0%ae/x",
    "file:///srv/data/．．/x",
    "file:///C:/srv/data/x",
    "file:///srv/data/x?../../etc/passwd",
    "file:/srv/data/x",
  ];

  it("the escapes are refused or outside, in an allow-list and in a deny-list", () => {
    const allow = compilePolicy(`urlWithin(args.uri, "${root}")`);
    const viaPath = compilePolicy(`pathWithin(fileUriPath(args.uri), "/srv/data")`);
    const deny = compilePolicy(`!urlWithin(args.uri, "file:///etc")`);
    if (!allow.ok || !viaPath.ok || !deny.ok) throw new Error("the policies compile");
    for (const uri of attacks) {
      expect(allow.policy.decide(env({ uri })).outcome, uri).toBe("deny");
      expect(viaPath.policy.decide(env({ uri })).outcome, uri).toBe("deny");
    }
    expect(deny.policy.decide(env({ uri: "file:///srv/data/../../etc/passwd" })).outcome).toBe("deny");
    for (const uri of ["file:///srv/data/a.txt", "file://localhost/srv/data/sub/a%20b.txt", "FILE:///srv/data/caf%C3%A9"]) {
      expect(allow.policy.decide(env({ uri })).outcome, uri).toBe("allow");
      expect(viaPath.policy.decide(env({ uri })).outcome, uri).toBe("allow");
    }
    expect(fileUriPath("file:///srv/data/sub/../a%20b.txt")).toEqual({ ok: true, value: "/srv/data/a b.txt" });
    expect(urlWithin("https://srv/data/x", root).ok).toBe(false);
    expect(urlWithin("file:///srv/data/x", "https://srv/data").ok).toBe(false);
    const ssrf = compilePolicy('!urlWithin(args.url, "https://internal.example")');
    if (!ssrf.ok) throw new Error("the policy compiles");
    expect(ssrf.policy.decide(env({ url: "file:///etc/passwd" })).outcome).toBe("deny");
  });

  it("an accepted URI names the path Node reads, and careless readings agree with the answer", () => {
    const segment = fc.constantFrom(
      "..",
      ".",
      "",
      "a",
      "data",
      "srv",
      "%2e%2e",
      "..%2f",
      "%20",
      "%C3%A9",
      "%25",
      "%zz",
      "x y",
      "|",
      "?",
      "#",
      "．",
      "A",
      "%3a",
    );
    const head = fc.constantFrom("file:///", "file://localhost/", "FILE:///", "file://x/", "file:/", "file:////", "file:///srv/data/");
    fc.assert(
      fc.property(head, fc.array(segment, { maxLength: 7 }), (start, segments) => {
        const uri = start + segments.join("/");
        const p = fileUriPath(uri);
        const w = urlWithin(uri, root);
        if (!p.ok) {
          expect(w.ok).toBe(false);
          return;
        }
        expect(posix.normalize(fileURLToPath(uri)).replace(/(.)\/$/, "$1")).toBe(p.value);
        const careless = posix.resolve("/", decodeURIComponent(uri.slice(uri.indexOf("/", uri.indexOf("//") + 2))));
        expect(w).toEqual({ ok: true, value: withinExactly(careless, "/srv/data") });
      }),
      params(3000),
    );
  });

  it("a URI of urlBytesMax bytes is read, one byte more is refused", () => {
    const head = "file:///";
    const edge = head + "a/".repeat(LIMITS.urlBytesMax / 2).slice(0, LIMITS.urlBytesMax - head.length);
    expect(edge.length).toBe(LIMITS.urlBytesMax);
    expect(fileUriPath(edge)).toMatchObject({ ok: false, problem: `the path is longer than ${LIMITS.pathBytesMax} bytes` });
    expect(fileUriPath(`${edge}a`)).toEqual({ ok: false, problem: `the URI is longer than ${LIMITS.urlBytesMax} bytes` });
    const short = `file:///${"a%20".repeat(1000)}`;
    expect(fileUriPath(short).ok).toBe(true);
  });
});

describe("bounded work on hostile input", () => {
  it("the listed NFKC separators are exactly the code points NFKC maps to `.`, `/` or `\\`, and each is refused", () => {
    const listed = (cp: number): boolean => NFKC_SEPARATOR_RANGES.some(([low, high]) => cp >= low && cp <= high);
    const missed: string[] = [];
    for (let cp = 0x80; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      if (/[./\\]/.test(String.fromCodePoint(cp).normalize("NFKC")) !== listed(cp)) missed.push(cp.toString(16));
    }
    expect(missed).toEqual([]);
    for (const [low, high] of NFKC_SEPARATOR_RANGES)
      for (let cp = low; cp <= high; cp++) expect(normalizePath(`/a/${String.fromCodePoint(cp)}/b`).ok, cp.toString(16)).toBe(false);
  });

  it("inputs at the limits, made of the dearest characters, are answered", () => {
    const pathish = ["．", "\u200c", "ß", "a.", "~1/", "::$DATA/", "é/"];
    for (const unit of pathish) {
      const body = unit.repeat(Math.floor((LIMITS.pathBytesMax - 1) / Buffer.byteLength(unit)));
      const r = pathWithin(`/${body}`, `/${body}`);
      expect(typeof r.ok).toBe("boolean");
      const u = urlWithin(`https://docs.example.com/${encodeURIComponent(body).slice(0, 8000)}`, API);
      expect(typeof u.ok).toBe("boolean");
    }
  });
});
