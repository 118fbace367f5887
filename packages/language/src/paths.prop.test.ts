// Property tests of the path and URL functions against node:path (posix) and the WHATWG URL parser,
// on hostile inputs: an accepted input agrees with them, and nothing escapes a directory or prefix.
import { posix } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SAMPLE_ENVIRONMENT } from "../test-support/arbitraries.js";
import { compilePolicy } from "./index.js";
import { LIMITS } from "./limits.js";
import { normalizePath, parseUrl, pathWithin, urlWithin } from "./paths.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: the oracle names the control characters the path functions must refuse
const CONTROL_OR_BACKSLASH = /[\u0000-\u001f\u007f\\]/;

const params = (runs: number): fc.Parameters<unknown> => ({ numRuns: runs, seed: Number(process.env["FC_SEED"] ?? 20261126) });

const DIR = "/tmp/agent-files/notes";
const SEGMENTS = [
  "tmp",
  "agent-files",
  "notes",
  "secret.txt",
  "..",
  ".",
  "",
  "...",
  "..x",
  "%2e%2e",
  "%2E.",
  ".%2e",
  "%2f",
  "a\\..\\b",
  "\\",
  "\u0000",
  "a\u0000b",
  "\n",
  "x y",
  "ü",
  "~",
  "．．",
  "\u2024\u2024",
  "NOTES",
  "notes.",
  "notes::$DATA",
  "\u200c",
];

/** Hostile POSIX paths: absolute or not, built from traversal, escapes and control characters. */
const hostilePath = fc
  .tuple(
    fc.constantFrom("/", "", "./", "//", "/tmp/agent-files/notes/"),
    fc.array(fc.constantFrom(...SEGMENTS), { maxLength: 8 }),
    fc.boolean(),
  )
  .map(([lead, segments, trailing]) => lead + segments.join("/") + (trailing ? "/" : ""));

/** Whether a segment is dots and spaces only but not `.` or `..`: Windows reads `...` as something else. */
function dotsOnlySegment(path: string): boolean {
  return path.split("/").some((s) => s !== "" && s !== "." && s !== ".." && [...s].every((c) => c === "." || c === " "));
}

/** Whether the path has a character that NFKC changes into a separator, or a hidden one (U+200C). */
function lookAlike(path: string): boolean {
  return [...path].some((c) => c === "\u200c" || (c.codePointAt(0)! > 0x7f && /[./\\]/.test(c.normalize("NFKC"))));
}

/** node:path's answer: the normalized path without a trailing slash. */
function nodeNormalize(path: string): string {
  const n = posix.normalize(path);
  return n.length > 1 && n.endsWith("/") ? n.slice(0, -1) : n;
}

function nodeWithin(path: string, dir: string): boolean {
  const rel = posix.relative(dir, path);
  return rel === "" || (rel !== ".." && !rel.startsWith("../") && !posix.isAbsolute(rel));
}

/** Every reading a careless tool might make of `path`: raw, percent-decoded, backslashes as slashes. */
function readings(path: string): string[] {
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // A malformed escape stays as written.
  }
  return [path, decoded, path.replaceAll("\\", "/"), decoded.replaceAll("\\", "/")].flatMap((p) => [p, p.normalize("NFKC")]);
}

describe("path functions against node:path", () => {
  it("an accepted path normalizes as posix.normalize does; a refused one is hostile", () => {
    fc.assert(
      fc.property(hostilePath, (path) => {
        const n = normalizePath(path);
        if (n.ok) {
          expect(n.value).toBe(nodeNormalize(path));
          expect(posix.isAbsolute(path)).toBe(true);
        } else {
          const hostile =
            !path.startsWith("/") ||
            CONTROL_OR_BACKSLASH.test(path) ||
            /%[0-9a-f]{2}/i.test(path) ||
            dotsOnlySegment(path) ||
            lookAlike(path);
          expect(hostile).toBe(true);
        }
      }),
      params(3000),
    );
  });

  it("pathWithin agrees with posix.relative, and no reading of an accepted path escapes", () => {
    fc.assert(
      fc.property(
        hostilePath,
        fc.constantFrom(DIR, `${DIR}/`, "/tmp", "/", "/tmp/agent-files/notes/./", "//tmp//agent-files"),
        (path, dir) => {
          const r = pathWithin(path, dir);
          if (!r.ok) return;
          expect(r.value).toBe(nodeWithin(posix.normalize(path), posix.normalize(dir)));
          if (r.value)
            for (const reading of readings(path)) expect(nodeWithin(posix.resolve("/", reading), posix.normalize(dir))).toBe(true);
        },
      ),
      params(3000),
    );
  });

  it("the escapes of the five-minute example are refused or outside", () => {
    const escapes = [
      `${DIR}/../secret.txt`,
      `${DIR}/..`,
      `${DIR}//../../secret.txt`,
      `${DIR}/./../secret.txt`,
      `${DIR}/%2e%2e/secret.txt`,
      `${DIR}/%2E%2E%2Fsecret.txt`,
      `${DIR}/..%2fsecret.txt`,
      `${DIR}\\..\\secret.txt`,
      `${DIR}/\u0000/../../secret.txt`,
      `${DIR}x/a.txt`,
      "tmp/agent-files/notes/a.txt",
      "./tmp/agent-files/notes/a.txt",
      "",
    ];
    for (const path of escapes) {
      const r = pathWithin(path, DIR);
      expect(r.ok && r.value, path).toBe(false);
    }
    expect(pathWithin(`${DIR}//a/./b.txt`, DIR)).toEqual({ ok: true, value: true });
    expect(pathWithin(`${DIR}/a/../b.txt`, DIR)).toEqual({ ok: true, value: true });
    expect(pathWithin(DIR, `${DIR}/`)).toEqual({ ok: true, value: true });
  });

  it("a path of pathBytesMax bytes is read, one byte more is refused", () => {
    const edge = `/${"a".repeat(LIMITS.pathBytesMax - 1)}`;
    expect(normalizePath(edge).ok).toBe(true);
    expect(normalizePath(`${edge}a`)).toEqual({ ok: false, problem: `the path is longer than ${LIMITS.pathBytesMax} bytes` });
  });
});

const HOSTS = [
  "example.com",
  "EXAMPLE.com",
  "example.com.",
  "example.com..",
  ".example.com",
  "exa%6dple.com",
  "xn--e1afmkfd.com",
  "пример.com",
  "ｅｘａｍｐｌｅ.com",
  "[::1]",
  "[::ffff:127.0.0.1]",
  "[0:0::1]",
  "127.0.0.1",
  "2130706433",
  "0x7f.1",
  "evil.com",
  "example.com\\.evil.com",
  "ex\tample.com",
  "",
  "example.com%2f.evil.com",
];
const URL_SEGMENTS = [
  "docs",
  "..%2f..",
  "%2e%2e%2f%2e%2e",
  "..%5c..",
  "%2E%2E%5C",
  "..",
  ".",
  "%2e%2e",
  ".%2E",
  "%2e",
  "%2f",
  "",
  "a b",
  "\\",
  "%00",
  "x",
  "%5c",
  "..;",
  "\u0000",
];

/** Hostile URLs: odd schemes, userinfo, IDNA and IPv6 hosts, trailing dots, traversal and escapes. */
const hostileUrl = fc
  .tuple(
    fc.constantFrom("https", "HTTPS", "http", "ws", "ftp", "file", "javascript", "data", " https"),
    fc.constantFrom("://", ":/", ":", ":\\\\", "://\t"),
    fc.constantFrom("", "user@", "a:b@", "@", "example.com@", "%40@"),
    fc.constantFrom(...HOSTS),
    fc.constantFrom("", ":443", ":80", ":8443", ":", ":0443", ":65536"),
    fc.array(fc.constantFrom(...URL_SEGMENTS), { maxLength: 6 }),
    fc.constantFrom("", "?q=1", "#f", "?a=/../", "#/../x"),
  )
  .map(([scheme, sep, user, host, port, segments, tail]) => `${scheme}${sep}${user}${host}${port}/${segments.join("/")}${tail}`);

/** URLs near the prefix `https://example.com/docs`, so that urlWithin is often asked about a real candidate. */
const nearUrl = fc
  .tuple(
    fc.constantFrom(
      "https://example.com",
      "https://EXAMPLE.com.",
      "https://example.com:443",
      "https://user@example.com",
      "https://example.com@evil.com",
      "https://evil.com",
      "https://example.com.evil.com",
      "https://[::1]",
      "https://ex%61mple.com",
      "http://example.com",
      "https:\\\\example.com",
    ),
    fc.constantFrom("/docs/", "/docs", "/", "/docs//", "/docs/./", "/docsx/"),
    fc.array(fc.constantFrom(...URL_SEGMENTS), { maxLength: 5 }),
    fc.constantFrom("", "?q=/../", "#/../x"),
  )
  .map(([origin, base, segments, tail]) => origin + base + segments.join("/") + tail);

function effectivePort(u: URL): number {
  if (u.port !== "") return Number(u.port);
  return u.protocol === "https:" || u.protocol === "wss:" ? 443 : 80;
}

describe("URL functions against the WHATWG URL parser", () => {
  it("an accepted URL has the scheme, host, port and path the parser gives", () => {
    fc.assert(
      fc.property(hostileUrl, (text) => {
        const r = parseUrl(text);
        if (!r.ok) return;
        const u = new URL(text);
        expect(r.value.scheme).toBe(u.protocol.slice(0, -1));
        expect(["http", "https", "ws", "wss"]).toContain(r.value.scheme);
        expect(r.value.host).toBe(u.hostname.endsWith(".") ? u.hostname.slice(0, -1) : u.hostname);
        expect(r.value.port).toBe(effectivePort(u));
        expect(r.value.path).toBe(u.pathname);
        expect(u.username + u.password).toBe("");
        expect(/^[\x21-\x7e]*$/.test(r.value.host)).toBe(true);
      }),
      params(4000),
    );
  });

  it("urlWithin never admits another origin or a path a decoding server reads outside the prefix", () => {
    fc.assert(
      fc.property(
        fc.oneof(hostileUrl, nearUrl),
        fc.constantFrom("https://example.com/docs", "https://example.com/docs/", "https://example.com"),
        (text, prefix) => {
          const r = urlWithin(text, prefix);
          if (!r.ok || !r.value) return;
          const u = new URL(text);
          const base = new URL(prefix).pathname.replace(/\/$/, "");
          expect(u.protocol).toBe("https:");
          expect(u.hostname.replace(/\.$/, "")).toBe("example.com");
          expect(effectivePort(u)).toBe(443);
          expect(text.slice(0, text.indexOf(u.hostname.replace(/\.$/, "")))).not.toContain("@");
          for (const reading of readings(u.pathname)) {
            const resolved = posix.normalize(reading);
            expect(base === "" || resolved === base || resolved.startsWith(`${base}/`), `${text} → ${reading}`).toBe(true);
          }
        },
      ),
      params(4000),
    );
  });

  it("the escapes of a fetch policy are refused or outside", () => {
    const prefix = "https://docs.example.com/api";
    const escapes = [
      "https://docs.example.com/api/../admin",
      "https://docs.example.com/api/%2e%2e/admin",
      "https://docs.example.com/api/.%2E/admin",
      "https://docs.example.com/api/..%2fadmin",
      "https://docs.example.com/api//..//admin",
      "https://docs.example.com/api\\..\\admin",
      "https://docs.example.com@evil.com/api/x",
      "https://evil.com#@docs.example.com/api/x",
      "https://docs.example.com.evil.com/api/x",
      "https://docs.example.com:8443/api/x",
      "http://docs.example.com/api/x",
      "https://docs.exаmple.com/api/x",
      "https://docs.example.com/apix",
      "https://docs.example.com/api%00/x",
      " https://docs.example.com/api/x",
      "https://docs.example.com/api/x\n",
      "docs.example.com/api/x",
      "/api/x",
    ];
    for (const text of escapes) {
      const r = urlWithin(text, prefix);
      expect(r.ok && r.value, text).toBe(false);
    }
    expect(urlWithin("https://DOCS.example.com.:443/api/v1/./x?q=../", prefix)).toEqual({ ok: true, value: true });
  });

  it("IDNA, IPv6 and trailing dots are normalized as the parser does", () => {
    expect(parseUrl("https://пример.com/").ok && (parseUrl("https://пример.com/") as { value: { host: string } }).value.host).toBe(
      "xn--e1afmkfd.com",
    );
    expect(
      parseUrl("https://[0:0::1]:8443/").ok && (parseUrl("https://[0:0::1]:8443/") as { value: { host: string; port: number } }).value,
    ).toMatchObject({ host: "[::1]", port: 8443 });
    expect(parseUrl("https://example.com./").ok && (parseUrl("https://example.com./") as { value: { host: string } }).value.host).toBe(
      "example.com",
    );
    expect(parseUrl("https://example.com../").ok).toBe(false);
  });

  it("a URL of urlBytesMax bytes is read, one byte more is refused", () => {
    const head = "https://example.com/";
    const edge = head + "a".repeat(LIMITS.urlBytesMax - head.length);
    expect(parseUrl(edge).ok).toBe(true);
    expect(parseUrl(`${edge}a`)).toEqual({ ok: false, problem: `the URL is longer than ${LIMITS.urlBytesMax} bytes` });
  });
});

describe("in a policy, a refused input fails closed", () => {
  const env = (args: Record<string, unknown>) => ({ ...SAMPLE_ENVIRONMENT, args });
  const within = compilePolicy(`pathWithin(args.path, "${DIR}")`);
  const outside = compilePolicy(`!pathWithin(args.path, "${DIR}")`);
  const host = compilePolicy(`urlHost(args.url) != "evil.com" && urlPort(args.url) == 443`);

  it("neither a test nor its negation allows what the function refuses", () => {
    if (!within.ok || !outside.ok || !host.ok) throw new Error("the policies compile");
    fc.assert(
      fc.property(hostilePath, (path) => {
        const a = within.policy.decide(env({ path }));
        const b = outside.policy.decide(env({ path }));
        if (!normalizePath(path).ok) {
          expect(a.outcome).toBe("deny");
          expect(b.outcome).toBe("deny");
        }
        if (a.outcome === "allow") expect(nodeWithin(posix.resolve("/", path), DIR)).toBe(true);
      }),
      params(1000),
    );
    fc.assert(
      fc.property(fc.oneof(hostileUrl, nearUrl), (url) => {
        const d = host.policy.decide(env({ url }));
        if (d.outcome === "allow") expect(new URL(url).hostname.replace(/\.$/, "")).not.toBe("evil.com");
        if (!parseUrl(url).ok) expect(d.outcome).toBe("deny");
      }),
      params(1000),
    );
  });

  it("a non-string argument is a run-time type error, not a refusal", () => {
    if (!within.ok) throw new Error("the policy compiles");
    const r = within.policy.evaluate(env({ path: 5 }));
    expect(r.ok ? undefined : r.error.code).toBe("runtime-type");
    const missing = within.policy.evaluate(env({}));
    expect(missing.ok ? undefined : missing.error.code).toBe("runtime-type");
  });

  it("the checker types every function and refuses a non-string argument", () => {
    expect(compilePolicy(`urlPort(args.u) == 443 && urlScheme(args.u) == "https" && pathNormalize(args.p) in ["/a"]`).ok).toBe(true);
    const bad = compilePolicy(`pathWithin(5, "/a")`);
    expect(bad.ok ? [] : bad.diagnostics.map((d) => d.code)).toEqual(["type-mismatch"]);
    const approver = compilePolicy(`pathWithin(approver, "/a")`);
    expect(approver.ok).toBe(false);
    const arity = compilePolicy(`urlHost(args.u, "x") == "a"`);
    expect(arity.ok ? [] : arity.diagnostics.map((d) => d.code)).toEqual(["wrong-arity"]);
  });
});
