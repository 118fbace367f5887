// Path and URL functions: lexical normalization of POSIX paths and WHATWG URLs, refusing hostile forms.
import { HIDDEN_PATTERN_SOURCE } from "@agent-authority/grammar";
import { LIMITS, utf8Length } from "./limits.js";

/** A normalized value, or the reason the input was refused (lower case, no final period). */
export type Normalized<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string };

/** A URL after WHATWG parsing and the checks below. */
export interface ParsedUrl {
  /** Lower case, without the colon: `https`. */
  readonly scheme: string;
  /** Lower case ASCII (IDNA hosts in their `xn--` form), one trailing dot removed, IPv6 in brackets. */
  readonly host: string;
  /** The explicit port, or the scheme's default. */
  readonly port: number;
  /** The path, with `.` and `..` segments resolved as the WHATWG parser resolves them. */
  readonly path: string;
  readonly hasQueryOrFragment: boolean;
}

/** The schemes the URL functions accept, with their default ports. */
const URL_SCHEMES: ReadonlyMap<string, number> = new Map([
  ["http", 80],
  ["https", 443],
  ["ws", 80],
  ["wss", 443],
]);

const PERCENT_ESCAPE = /%[0-9A-Fa-f]{2}/;
/**
 * Percent escapes of `.`, `/`, `\\`, NUL, `%` and `;` in a URL's path: a server may decode them into
 * a traversal, decode twice (`%252e`), or read `..;` as `..` (docs/decisions/0145).
 */
const DANGEROUS_ESCAPE = /%(2e|2f|5c|00|25|3b)/i;
/** Percent escapes a `file:` URI may not carry: `.`, `/`, `\\`, NUL and `%` (decoded twice, `%252e`). */
const DANGEROUS_FILE_ESCAPE = /%(2e|2f|5c|00|25)/i;

/**
 * Characters a tool may read as `.`, `/` or `\\` that NFKC does not map to one: the ideographic full
 * stop (which IDNA maps to `.`) and the slashes that Windows' best-fit code pages map to `/` or `\\`.
 * Those NFKC maps (`．` U+FF0E, `․` U+2024, `／` U+FF0F and the like) are found by normalizing.
 */
const LOOK_ALIKES: ReadonlySet<number> = new Set([0x3002, 0x2044, 0x2215, 0x29f5, 0x29f8, 0x29f9, 0xfe68, 0xff3c]);

function refuse<T>(problem: string): Normalized<T> {
  return { ok: false, problem };
}

/** The first control character (C0, space aside for paths, DEL) or backslash in `text`, if any. */
function badCharacter(text: string, spaceAllowed: boolean): string | undefined {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x7f || (c === 0x20 && !spaceAllowed))
      return c === 0 ? "NUL" : `U+${c.toString(16).toUpperCase().padStart(4, "0")}`;
    if (c === 0x5c) return "a backslash";
  }
  return undefined;
}

function codePointName(cp: number): string {
  return `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;
}

/**
 * A hidden character (isHidden) beyond ASCII: one search of the whole text finds the first, where a
 * test per character cost more than the rest of a path function's work (docs/decisions/0147).
 */
const HIDDEN_BEYOND_ASCII = new RegExp(`(?![\\u0000-\\u007f])${HIDDEN_PATTERN_SOURCE}`, "u");

/**
 * The code points whose NFKC form contains `.`, `/` or `\\` (`․` U+2024, `⒈` U+2488, `．` U+FF0E,
 * `／` U+FF0F, …): a tool that normalizes names reads them as separators. Listed rather than found by
 * normalizing each character of a path, which made the path functions three times dearer
 * (docs/decisions/0147); a test holds the list to `String.prototype.normalize` at every code point.
 */
export const NFKC_SEPARATOR_RANGES: readonly (readonly [number, number])[] = Object.freeze([
  [0x2024, 0x2026],
  [0x2100, 0x2101],
  [0x2105, 0x2106],
  [0x2488, 0x249b],
  [0x33c2, 0x33c2],
  [0x33c7, 0x33c7],
  [0x33d8, 0x33d8],
  [0xfe19, 0xfe19],
  [0xfe30, 0xfe30],
  [0xfe52, 0xfe52],
  [0xfe68, 0xfe68],
  [0xff0e, 0xff0f],
  [0xff3c, 0xff3c],
  [0x1f100, 0x1f100],
] as const);

const hex = (cp: number): string => `\\u{${cp.toString(16)}}`;

/** Any character of LOOK_ALIKES or NFKC_SEPARATOR_RANGES, found by one search. */
const LOOK_ALIKE = new RegExp(
  `[${[...LOOK_ALIKES].map(hex).join("")}${NFKC_SEPARATOR_RANGES.map(([low, high]) => `${hex(low)}-${hex(high)}`).join("")}]`,
  "u",
);

/**
 * The first character of `text` that a tool may read as `.`, `/` or `\\` (one NFKC maps to them, or
 * one of LOOK_ALIKES) or that some file systems ignore (a hidden character, as macOS ignores U+200C),
 * if any. Two searches of the text, one per kind, rather than a test per character.
 */
function lookAlikeCharacter(text: string): string | undefined {
  const hidden = text.search(HIDDEN_BEYOND_ASCII);
  const alike = text.search(LOOK_ALIKE);
  if (alike >= 0 && (hidden < 0 || alike < hidden)) {
    return `${codePointName(text.codePointAt(alike) ?? 0)}, which reads as \`.\`, \`/\` or \`\\\``;
  }
  return hidden < 0 ? undefined : `the hidden character ${codePointName(text.codePointAt(hidden) ?? 0)}`;
}

/**
 * The name Windows reads for a path segment: the part before an alternate data stream's `:`
 * (`x::$DATA` is `x`), without trailing dots and spaces (`x. ` is `x`).
 */
function windowsName(segment: string): string {
  const colon = segment.indexOf(":");
  const name = colon < 0 ? segment : segment.slice(0, colon);
  let end = name.length;
  while (end > 0 && (name.charCodeAt(end - 1) === 0x2e || name.charCodeAt(end - 1) === 0x20)) end--;
  return name.slice(0, end);
}

/**
 * The segments of a path split on `/`, `//` and `.` dropped, `..` resolved: at the root (`clamp`,
 * an absolute path) or refused (a relative path never climbs above its base). Refused: a segment that
 * some file system reads as `.`, `..` or nothing (`...`, `.. `, `..::$DATA`, `:x`).
 */
function resolveSegments(path: string, clamp: boolean): Normalized<string[]> {
  const segments: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (segments.pop() === undefined && !clamp) return refuse("the path climbs above its base with `..`");
    } else if (windowsName(segment) === "") {
      return refuse(`the path has a segment \`${segment}\` that some file systems read as \`.\`, \`..\` or nothing`);
    } else segments.push(segment);
  }
  return { ok: true, value: segments };
}

/** The checks every path gets before its segments are read: characters, escapes and look-alikes. */
function pathCharacters(path: string): string | undefined {
  const bad = badCharacter(path, true);
  if (bad !== undefined) return `the path contains ${bad}`;
  if (PERCENT_ESCAPE.test(path)) return "the path contains a percent escape";
  const alike = lookAlikeCharacter(path);
  return alike === undefined ? undefined : `the path contains ${alike}`;
}

/** `path` (absolute) as its resolved segments, or the reason it is refused. */
function absoluteSegments(path: string): Normalized<string[]> {
  if (utf8Length(path) > LIMITS.pathBytesMax) return refuse(`the path is longer than ${LIMITS.pathBytesMax} bytes`);
  if (!path.startsWith("/")) return refuse("the path is not absolute");
  const problem = pathCharacters(path);
  return problem === undefined ? resolveSegments(path, true) : refuse(problem);
}

/** `path` (relative) as its resolved segments, or the reason it is refused. */
function relativeSegments(path: string): Normalized<string[]> {
  if (utf8Length(path) > LIMITS.pathBytesMax) return refuse(`the path is longer than ${LIMITS.pathBytesMax} bytes`);
  if (path === "") return refuse("the path is empty");
  if (path.startsWith("/")) return refuse("the path is not relative");
  if (path[1] === ":" && /^[A-Za-z]$/.test(path[0] ?? "")) return refuse("the path names a Windows drive, so it is not relative there");
  const problem = pathCharacters(path);
  return problem === undefined ? resolveSegments(path, false) : refuse(problem);
}

/**
 * A segment's name as a case-insensitive file system may read it (macOS, Windows): NFKC, the
 * Windows name (no stream, no trailing dots or spaces), case folded both ways (`ſ` and `S`, `ß` and `SS`).
 */
function looseName(segment: string): string {
  // Printable ASCII is its own NFKC form, and folds to lower case in one step.
  if (ASCII.test(segment)) return windowsName(segment).toLowerCase();
  return windowsName(segment.normalize("NFKC")).toUpperCase().toLowerCase();
}

const ASCII = /^[ -~]*$/;

/** The loose name of segment `i` of the path (`ofPath`) or of the directory: looseName, or one kept from before. */
type LooseNames = (segment: string, i: number, ofPath: boolean) => string;

/** Whether a segment may be a Windows 8.3 short name (`GITHUB~1`, `WORKFL~1.YML`), which names another file. */
function shortNameShaped(segment: string): boolean {
  if (segment.length > 12) return false;
  const tilde = segment.indexOf("~");
  if (tilde < 1) return false;
  const next = segment.charCodeAt(tilde + 1);
  return next >= 0x30 && next <= 0x39;
}

/**
 * Whether `path` is `dir` or under it, segment by segment, as every file system reads them: true
 * when each of the directory's segments is the path's exactly; false when one differs under every
 * reading; refused when one differs only as a case-insensitive file system reads it (`.GITHUB`,
 * `workflows.`, `workflows::$DATA`, a short name), because then the answer depends on where the
 * tool runs, and a refusal denies in both an allow-list and a deny-list (docs/decisions/0145).
 */
function segmentsWithin(path: readonly string[], dir: readonly string[], loose: LooseNames = looseName): Normalized<boolean> {
  if (path.length < dir.length) return { ok: true, value: false };
  let ambiguous: string | undefined;
  for (let i = 0; i < dir.length; i++) {
    const p = path[i] ?? "";
    const d = dir[i] ?? "";
    if (p === d) continue;
    const shortName = shortNameShaped(p) || shortNameShaped(d);
    if (!shortName && loose(p, i, true) !== loose(d, i, false)) return { ok: true, value: false };
    ambiguous ??= shortName
      ? `\`${shortNameShaped(p) ? p : d}\` may be a Windows short name`
      : `\`${p}\` is \`${d}\` on a case-insensitive file system`;
  }
  return ambiguous === undefined
    ? { ok: true, value: true }
    : refuse(`the path is within the directory only on some file systems: ${ambiguous}`);
}

/**
 * `path` normalized lexically: `//` and `.` segments dropped, `..` resolved (never above `/`), no
 * trailing slash. Refused: a relative path, NUL and other control characters, backslashes, any
 * percent escape (a tool may decode `%2e%2e` into `..`), and a path over LIMITS.pathBytesMax.
 */
export function normalizePath(path: string): Normalized<string> {
  const segments = absoluteSegments(path);
  return segments.ok ? { ok: true, value: `/${segments.value.join("/")}` } : segments;
}

/** Whether `path` is `dir` or lies under it, both normalized by normalizePath first. */
export function pathWithin(path: string, dir: string): Normalized<boolean> {
  const p = absoluteSegments(path);
  if (!p.ok) return p;
  const d = absoluteSegments(dir);
  if (!d.ok) return refuse(`the directory is refused: ${d.problem}`);
  return segmentsWithin(p.value, d.value);
}

/**
 * `path` relative to a base the tool resolves it against (a repository's root, a working
 * directory), normalized lexically: `//` and `.` dropped, `..` resolved, no trailing slash; the base
 * itself is `.`. Refused, besides what normalizePath refuses: an absolute or empty path, and a `..`
 * that climbs above the base (the tool would leave its root, or resolve it differently).
 */
export function normalizeRelativePath(path: string): Normalized<string> {
  const segments = relativeSegments(path);
  if (!segments.ok) return segments;
  return { ok: true, value: segments.value.length === 0 ? "." : segments.value.join("/") };
}

/** Whether the relative `path` is `dir` or lies under it, both relative to the same base and normalized first. */
export function relativePathWithin(path: string, dir: string): Normalized<boolean> {
  const p = relativeSegments(path);
  if (!p.ok) return p;
  const d = relativeSegments(dir);
  if (!d.ok) return refuse(`the directory is refused: ${d.problem}`);
  return segmentsWithin(p.value, d.value);
}

/** The authority of `text` (between `//` and the first `/`, `?` or `#`), when it has one. */
function authorityOf(text: string): string {
  const start = text.indexOf("//");
  if (start < 0) return "";
  const rest = text.slice(start + 2);
  const end = rest.search(/[/?#]/);
  return end < 0 ? rest : rest.slice(0, end);
}

/**
 * What is wrong with a URL's path after WHATWG parsing, if anything: an empty segment (`//`); an
 * escaped `.`, `/`, `\\`, NUL, `%` or `;`; a `;` (Tomcat and Spring read `..;` as `..`); an escape
 * that is not UTF-8 (`%c0%ae`); and, once decoded, a control character, a look-alike of `.` or `/`,
 * or a segment some server reads as `.`, `..` or nothing (`...`, `..%20`).
 */
function urlPathProblem(path: string): string | undefined {
  if (path.includes("//")) return "the path has an empty segment";
  if (DANGEROUS_ESCAPE.test(path)) return "the path contains an escaped `.`, `/`, `\\`, `%`, `;` or NUL";
  if (path.includes(";")) return "the path contains `;`, which some servers read as the end of a segment";
  let decoded: string;
  try {
    // Without a `%` there is nothing to decode, and decoding would only copy the path.
    decoded = path.includes("%") ? decodeURIComponent(path) : path;
  } catch {
    return "the path has a percent escape that is not UTF-8";
  }
  const bad = badCharacter(decoded, true);
  if (bad !== undefined) return `the path contains an escaped ${bad}`;
  const alike = lookAlikeCharacter(decoded);
  if (alike !== undefined) return `the path contains ${alike}`;
  const blank = blankSegment(decoded);
  if (blank !== undefined) return `the path has a segment \`${blank}\` that some servers read as \`.\`, \`..\` or nothing`;
  return undefined;
}

/**
 * The first segment of `path` (split on `/`) whose Windows name is empty (windowsName: only dots
 * and spaces before any `:`, as `...`, `.. ` and `:x`) but that is not `.` or `..`, if any. It
 * reads the path once and cuts out only such a segment: a URL's path may have thousands of
 * segments, and a string for each was most of a URL function's work (docs/decisions/0146).
 */
function blankSegment(path: string): string | undefined {
  for (let start = 0; start < path.length; ) {
    const slash = path.indexOf("/", start);
    const end = slash < 0 ? path.length : slash;
    let i = start;
    while (i < end && (path.charCodeAt(i) === 0x2e || path.charCodeAt(i) === 0x20)) i++;
    if (end > start && (i === end || path.charCodeAt(i) === 0x3a)) {
      const segment = path.slice(start, end);
      if (segment !== "." && segment !== "..") return segment;
    }
    start = end + 1;
  }
  return undefined;
}

/**
 * `text` parsed as the WHATWG URL standard parses it (as `fetch` does), then checked. Refused:
 * anything but http, https, ws and wss; userinfo (`user@`); control characters, spaces and
 * backslashes (which the parser would silently drop or turn into `/`); a host with an empty label
 * (`a..b`, or more than one trailing dot); a path with an empty segment (`//`) or an escaped `.`,
 * `/`, `\` or NUL left after parsing; and a URL over LIMITS.urlBytesMax.
 */
export function parseUrl(text: string): Normalized<ParsedUrl> {
  if (utf8Length(text) > LIMITS.urlBytesMax) return refuse(`the URL is longer than ${LIMITS.urlBytesMax} bytes`);
  const bad = badCharacter(text, false);
  if (bad !== undefined) return refuse(`the URL contains ${bad === "U+0020" ? "a space" : bad}`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refuse("the URL is not an absolute URL");
  }
  const scheme = url.protocol.slice(0, -1);
  const defaultPort = URL_SCHEMES.get(scheme);
  if (defaultPort === undefined) return refuse(`the scheme \`${scheme}\` is not http, https, ws or wss`);
  if (url.username !== "" || url.password !== "" || authorityOf(text).includes("@")) return refuse("the URL has userinfo");
  let host = url.hostname;
  if (host.endsWith(".")) host = host.slice(0, -1);
  if (host === "" || host.startsWith(".") || host.endsWith(".") || host.includes("..")) return refuse("the host has an empty label");
  const path = url.pathname;
  const problem = urlPathProblem(path);
  if (problem !== undefined) return refuse(problem);
  const port = url.port === "" ? defaultPort : Number(url.port);
  return {
    ok: true,
    value: {
      scheme,
      host,
      port,
      path,
      hasQueryOrFragment: url.search !== "" || url.hash !== "" || text.includes("#") || text.includes("?"),
    },
  };
}

/** Whether `text` begins with the scheme `file:` (in any case). */
function isFileUri(text: string): boolean {
  return text.slice(0, 5).toLowerCase() === "file:";
}

/** The authority and path of a `file:` URI, or the reason it is refused (before any decoding). */
function fileUriParts(text: string): Normalized<string> {
  if (!isFileUri(text)) return refuse("the URI is not a `file:` URI");
  const rest = text.slice(5);
  if (!rest.startsWith("//")) return refuse("the `file:` URI has no `//` before its path");
  const slash = rest.indexOf("/", 2);
  if (slash < 0) return refuse("the `file:` URI has no path");
  const host = rest.slice(2, slash);
  if (host !== "" && host.toLowerCase() !== "localhost") return refuse("the `file:` URI names a host other than the local one");
  const raw = rest.slice(slash);
  if (raw.includes("?") || raw.includes("#")) return refuse("the `file:` URI has a query or a fragment");
  if (raw.startsWith("//")) return refuse("the `file:` URI's path begins with `//`, a network share on some systems");
  if (raw.includes("//")) return refuse("the `file:` URI's path has an empty segment, which readers resolve with `..` differently");
  if (raw.includes("|")) return refuse("the `file:` URI contains `|`, which some readers take for a drive's `:`");
  if (DANGEROUS_FILE_ESCAPE.test(raw)) return refuse("the `file:` URI contains an escaped `.`, `/`, `\\`, `%` or NUL");
  return { ok: true, value: raw };
}

/**
 * The absolute POSIX path a `file:` URI names, percent escapes decoded once, then normalized as
 * normalizePath normalizes (so it composes with pathWithin). Refused: a host other than none or
 * `localhost`; a query or fragment; an empty segment (`//`); an escaped `.`, `/`, `\\`, `%` or NUL; an escape that is not
 * UTF-8; `|` and a drive letter; a path beginning `//`; spaces, control characters and backslashes;
 * and whatever normalizePath refuses once decoded; and a URI over LIMITS.urlBytesMax bytes.
 */
export function fileUriPath(text: string): Normalized<string> {
  const segments = fileUriSegments(text);
  return segments.ok ? { ok: true, value: `/${segments.value.join("/")}` } : segments;
}

/** The resolved segments of the path a `file:` URI names (fileUriPath). */
function fileUriSegments(text: string): Normalized<string[]> {
  if (utf8Length(text) > LIMITS.urlBytesMax) return refuse(`the URI is longer than ${LIMITS.urlBytesMax} bytes`);
  const bad = badCharacter(text, false);
  if (bad !== undefined) return refuse(`the URI contains ${bad === "U+0020" ? "a space" : bad}`);
  const raw = fileUriParts(text);
  if (!raw.ok) return raw;
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw.value);
  } catch {
    return refuse("the `file:` URI has a percent escape that is not UTF-8");
  }
  const drive = decoded.charCodeAt(1) | 0x20;
  if (drive >= 0x61 && drive <= 0x7a && decoded[2] === ":" && (decoded.length === 3 || decoded[3] === "/"))
    return refuse("the `file:` URI names a Windows drive");
  return absoluteSegments(decoded);
}

/**
 * One argument of the URL functions as they read it, each reading made at most once: parsed as a
 * WHATWG URL (`url`), or as a `file:` URI's path (`file`), with the case-insensitive names of its
 * segments (`loose`) made one by one as urlWithin needs them. An evaluation keeps one reading per
 * distinct string, so `urlPort(args.u)` and `urlScheme(args.u)` parse `args.u` once (decision 0147).
 */
export class UrlReading {
  private parsed: Normalized<ParsedUrl> | undefined;
  private segments: Normalized<string[]> | undefined;
  private readonly loose: string[] = [];

  constructor(readonly text: string) {}

  get isFile(): boolean {
    return isFileUri(this.text);
  }

  get url(): Normalized<ParsedUrl> {
    return (this.parsed ??= parseUrl(this.text));
  }

  get file(): Normalized<string[]> {
    return (this.segments ??= fileUriSegments(this.text));
  }

  /** looseName of segment `i` of the `file:` path, made once. */
  looseAt(segment: string, i: number): string {
    return (this.loose[i] ??= looseName(segment));
  }
}

/**
 * urlWithin when either side is a `file:` URI: both must be, and their paths are compared as
 * pathWithin compares them. A `file:` URI against a prefix of another scheme, or the reverse, is
 * refused rather than `false`, so that `!urlWithin(args.url, "https://internal.example")` does not
 * let `file:///etc/passwd` through (it refused every `file:` URI before they were read).
 */
function fileUriWithin(text: UrlReading, prefix: UrlReading): Normalized<boolean> {
  if (!text.isFile) return refuse("the URL is not a `file:` URI, and the prefix is");
  const u = text.file;
  if (!u.ok) return u;
  if (!prefix.isFile) return refuse("the URL is a `file:` URI, and the prefix is not");
  const p = prefix.file;
  if (!p.ok) return refuse(`the prefix is refused: ${p.problem}`);
  return segmentsWithin(u.value, p.value, (segment, i, ofPath) => (ofPath ? text : prefix).looseAt(segment, i));
}

/**
 * Whether `text` is at or under `prefix`: the same scheme, host and port, and a path equal to the
 * prefix's or under it segment by segment (`/docs` covers `/docs/a`, not `/docsx`). The query and
 * fragment of `text` are ignored; a prefix may have neither. A `file:` URI is read by fileUriPath
 * and compared as pathWithin compares paths; a `file:` URI against a prefix of another scheme fails closed.
 */
export function urlWithin(text: string, prefix: string): Normalized<boolean> {
  const reading = new UrlReading(text);
  return urlWithinRead(reading, text === prefix ? reading : new UrlReading(prefix));
}

/**
 * urlWithin of two readings. Past the readings, its work is comparing the shorter path's code units
 * once (segments compared in place, loose names made once per reading), which FUNCTION_COSTS charges.
 */
export function urlWithinRead(text: UrlReading, prefix: UrlReading): Normalized<boolean> {
  if (text.isFile || prefix.isFile) return fileUriWithin(text, prefix);
  const u = text.url;
  if (!u.ok) return u;
  const p = prefix.url;
  if (!p.ok) return refuse(`the prefix is refused: ${p.problem}`);
  if (p.value.hasQueryOrFragment) return refuse("the prefix has a query or a fragment");
  if (u.value.scheme !== p.value.scheme || u.value.host !== p.value.host || u.value.port !== p.value.port)
    return { ok: true, value: false };
  const base = p.value.path;
  const length = base.endsWith("/") ? base.length - 1 : base.length;
  const path = u.value.path;
  if (length === 0) return { ok: true, value: true };
  // `path` is the base, or begins with the base and a `/`: compared in place, no string built.
  const boundary = path.length === length || (path.length > length && path.charCodeAt(length) === 0x2f);
  return { ok: true, value: boundary && path.startsWith(length === base.length ? base : base.slice(0, length)) };
}

/** One path or URL function of the language: its parameters are strings. */
export interface PathUrlFunction {
  readonly arity: 1 | 2;
  readonly result: "bool" | "string" | "int";
  /** The diagnostic code of a refused input. */
  readonly code: "invalid-path" | "invalid-url";
  readonly apply: (a: string, b: string) => Normalized<boolean | string | number>;
  /** For a URL function: the same, on readings an evaluation keeps per distinct string (UrlReading). */
  readonly read?: (a: UrlReading, b: UrlReading) => Normalized<boolean | string | number>;
}

function urlPart(part: "scheme" | "host" | "port" | "path"): (a: UrlReading) => Normalized<string | number> {
  return (a) => {
    const u = a.url;
    return u.ok ? { ok: true, value: u.value[part] } : u;
  };
}

function readFilePath(a: UrlReading): Normalized<string> {
  const segments = a.file;
  return segments.ok ? { ok: true, value: `/${segments.value.join("/")}` } : segments;
}

/** A URL function over strings, and over readings. */
function urlFunction(
  arity: 1 | 2,
  result: "bool" | "string" | "int",
  read: (a: UrlReading, b: UrlReading) => Normalized<boolean | string | number>,
): PathUrlFunction {
  return { arity, result, code: "invalid-url", apply: (a, b) => read(new UrlReading(a), new UrlReading(b)), read };
}

/** The path and URL functions by name (docs/policy-language.md, docs/decisions/0135). */
export const PATH_URL_FUNCTIONS: ReadonlyMap<string, PathUrlFunction> = new Map<string, PathUrlFunction>([
  ["pathWithin", { arity: 2, result: "bool", code: "invalid-path", apply: pathWithin }],
  ["pathNormalize", { arity: 1, result: "string", code: "invalid-path", apply: normalizePath }],
  ["relPathWithin", { arity: 2, result: "bool", code: "invalid-path", apply: relativePathWithin }],
  ["relPathNormalize", { arity: 1, result: "string", code: "invalid-path", apply: normalizeRelativePath }],
  ["urlWithin", urlFunction(2, "bool", urlWithinRead)],
  ["urlScheme", urlFunction(1, "string", urlPart("scheme"))],
  ["urlHost", urlFunction(1, "string", urlPart("host"))],
  ["urlPort", urlFunction(1, "int", urlPart("port"))],
  ["urlPath", urlFunction(1, "string", urlPart("path"))],
  ["fileUriPath", urlFunction(1, "string", readFilePath)],
]);
