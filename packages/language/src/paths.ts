// Path and URL functions: lexical normalization of POSIX paths and WHATWG URLs, refusing hostile forms.
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
/** Percent escapes of `.`, `/`, `\` and NUL, which a server may decode into a traversal. */
const DANGEROUS_ESCAPE = /%(2e|2f|5c|00)/i;

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

/**
 * `path` normalized lexically: `//` and `.` segments dropped, `..` resolved (never above `/`), no
 * trailing slash. Refused: a relative path, NUL and other control characters, backslashes, any
 * percent escape (a tool may decode `%2e%2e` into `..`), and a path over LIMITS.pathBytesMax.
 */
export function normalizePath(path: string): Normalized<string> {
  if (utf8Length(path) > LIMITS.pathBytesMax) return refuse(`the path is longer than ${LIMITS.pathBytesMax} bytes`);
  if (!path.startsWith("/")) return refuse("the path is not absolute");
  const bad = badCharacter(path, true);
  if (bad !== undefined) return refuse(`the path contains ${bad}`);
  if (PERCENT_ESCAPE.test(path)) return refuse("the path contains a percent escape");
  const segments: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") segments.pop();
    else segments.push(segment);
  }
  return { ok: true, value: `/${segments.join("/")}` };
}

/** Whether `path` is `dir` or lies under it, both normalized by normalizePath first. */
export function pathWithin(path: string, dir: string): Normalized<boolean> {
  const p = normalizePath(path);
  if (!p.ok) return p;
  const d = normalizePath(dir);
  if (!d.ok) return refuse(`the directory is refused: ${d.problem}`);
  return { ok: true, value: d.value === "/" || p.value === d.value || p.value.startsWith(`${d.value}/`) };
}

/**
 * `path` relative to a base the tool resolves it against (a repository's root, a working
 * directory), normalized lexically: `//` and `.` dropped, `..` resolved, no trailing slash; the base
 * itself is `.`. Refused, besides what normalizePath refuses: an absolute or empty path, and a `..`
 * that climbs above the base (the tool would leave its root, or resolve it differently).
 */
export function normalizeRelativePath(path: string): Normalized<string> {
  if (utf8Length(path) > LIMITS.pathBytesMax) return refuse(`the path is longer than ${LIMITS.pathBytesMax} bytes`);
  if (path === "") return refuse("the path is empty");
  if (path.startsWith("/")) return refuse("the path is not relative");
  const bad = badCharacter(path, true);
  if (bad !== undefined) return refuse(`the path contains ${bad}`);
  if (PERCENT_ESCAPE.test(path)) return refuse("the path contains a percent escape");
  const segments: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment !== "..") segments.push(segment);
    else if (segments.pop() === undefined) return refuse("the path climbs above its base with `..`");
  }
  return { ok: true, value: segments.length === 0 ? "." : segments.join("/") };
}

/** Whether the relative `path` is `dir` or lies under it, both relative to the same base and normalized first. */
export function relativePathWithin(path: string, dir: string): Normalized<boolean> {
  const p = normalizeRelativePath(path);
  if (!p.ok) return p;
  const d = normalizeRelativePath(dir);
  if (!d.ok) return refuse(`the directory is refused: ${d.problem}`);
  return { ok: true, value: d.value === "." || p.value === d.value || p.value.startsWith(`${d.value}/`) };
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
  if (path.includes("//")) return refuse("the path has an empty segment");
  if (DANGEROUS_ESCAPE.test(path)) return refuse("the path contains an escaped `.`, `/`, `\\` or NUL");
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

/**
 * Whether `text` is at or under `prefix`: the same scheme, host and port, and a path equal to the
 * prefix's or under it segment by segment (`/docs` covers `/docs/a`, not `/docsx`). The query and
 * fragment of `text` are ignored; a prefix may have neither.
 */
export function urlWithin(text: string, prefix: string): Normalized<boolean> {
  const u = parseUrl(text);
  if (!u.ok) return u;
  const p = parseUrl(prefix);
  if (!p.ok) return refuse(`the prefix is refused: ${p.problem}`);
  if (p.value.hasQueryOrFragment) return refuse("the prefix has a query or a fragment");
  if (u.value.scheme !== p.value.scheme || u.value.host !== p.value.host || u.value.port !== p.value.port)
    return { ok: true, value: false };
  const base = p.value.path.endsWith("/") ? p.value.path.slice(0, -1) : p.value.path;
  const path = u.value.path;
  return { ok: true, value: base === "" || path === base || path.startsWith(`${base}/`) };
}

/** One path or URL function of the language: its parameters are strings. */
export interface PathUrlFunction {
  readonly arity: 1 | 2;
  readonly result: "bool" | "string" | "int";
  /** The diagnostic code of a refused input. */
  readonly code: "invalid-path" | "invalid-url";
  readonly apply: (a: string, b: string) => Normalized<boolean | string | number>;
}

function urlPart(part: "scheme" | "host" | "port" | "path"): (a: string) => Normalized<string | number> {
  return (a) => {
    const u = parseUrl(a);
    return u.ok ? { ok: true, value: u.value[part] } : u;
  };
}

/** The path and URL functions by name (docs/policy-language.md, docs/decisions/0135). */
export const PATH_URL_FUNCTIONS: ReadonlyMap<string, PathUrlFunction> = new Map<string, PathUrlFunction>([
  ["pathWithin", { arity: 2, result: "bool", code: "invalid-path", apply: pathWithin }],
  ["pathNormalize", { arity: 1, result: "string", code: "invalid-path", apply: normalizePath }],
  ["relPathWithin", { arity: 2, result: "bool", code: "invalid-path", apply: relativePathWithin }],
  ["relPathNormalize", { arity: 1, result: "string", code: "invalid-path", apply: normalizeRelativePath }],
  ["urlWithin", { arity: 2, result: "bool", code: "invalid-url", apply: urlWithin }],
  ["urlScheme", { arity: 1, result: "string", code: "invalid-url", apply: urlPart("scheme") }],
  ["urlHost", { arity: 1, result: "string", code: "invalid-url", apply: urlPart("host") }],
  ["urlPort", { arity: 1, result: "int", code: "invalid-url", apply: urlPart("port") }],
  ["urlPath", { arity: 1, result: "string", code: "invalid-url", apply: urlPart("path") }],
]);
