// The documentation of every built-in name and function, shown on hover and in completion.
import { ENVIRONMENT_TYPES, type FUNCTION_ARITY } from "@agent-authority/language";

export interface BuiltinDoc {
  readonly name: string;
  /** The signature or type as a reader sees it, e.g. `amount_minor: int`. */
  readonly signature: string;
  readonly doc: string;
}

const VARIABLE_DOCS: Readonly<Record<keyof typeof ENVIRONMENT_TYPES | "args", string>> = {
  amount_minor: "The action's amount in minor units of `currency` (cents for EUR); never negative.",
  currency: 'The action\'s ISO 4217 currency code, such as `"EUR"`.',
  tool: 'The tool the agent calls, such as `"purchase.create"`.',
  approver:
    "The human whose approval covers this action, or `null`. Unknown while deciding, so the policy can answer `gated`; it may only be compared (`==`, `!=`, `in`, `startsWith`, `endsWith`).",
  agent: "The id of the agent that acts.",
  principal: "The principal on whose behalf the agent acts.",
  audience: "The audience the action is addressed to.",
  uses: "How many times the grant has been used before this action.",
  spent_minor: "How much of the budget the grant has spent before this action, in minor units.",
  hour_utc: "The hour of the decision in UTC, 0 to 23.",
  weekday_utc: 'The weekday of the decision in UTC: `"mon"`, `"tue"`, `"wed"`, `"thu"`, `"fri"`, `"sat"` or `"sun"`.',
  args: "The action's own arguments, read as `args.<name>`: dynamic values checked at run time; an absent name reads as `null`.",
};

const FUNCTION_DOCS: Readonly<Record<keyof typeof FUNCTION_ARITY, { signature: string; doc: string }>> = {
  startsWith: { signature: "startsWith(s: string, prefix: string): bool", doc: "True when `s` begins with `prefix`." },
  endsWith: { signature: "endsWith(s: string, suffix: string): bool", doc: "True when `s` ends with `suffix`." },
  size: { signature: "size(x: string | list): int", doc: "The length of a string in code points, or the number of elements of a list." },
  lower: { signature: "lower(s: string): string", doc: "`s` in lower case." },
  pathWithin: {
    signature: "pathWithin(path: string, dir: string): bool",
    doc: "True when the absolute POSIX `path` is `dir` or lies under it, both normalized lexically first (`//`, `.` and `..` resolved). A relative path, NUL, a backslash, a percent escape or a look-alike of `.` fails closed, and so does a path that is inside only on a case-insensitive file system (`/TMP/x`, `dir.`, `dir::$DATA`).",
  },
  pathNormalize: {
    signature: "pathNormalize(path: string): string",
    doc: "The absolute POSIX `path` normalized lexically: `//` and `.` dropped, `..` resolved, no trailing slash. A relative path, NUL, a backslash or a percent escape fails closed.",
  },
  relPathWithin: {
    signature: "relPathWithin(path: string, dir: string): bool",
    doc: "True when the relative `path` is `dir` or lies under it, both relative to the same base (a repository's root) and normalized lexically first. An absolute path, a `..` above the base, NUL, a backslash, a percent escape or a look-alike of `.` fails closed, and so does a path that is inside only on a case-insensitive file system (`.GITHUB/workflows`, `workflows./x`).",
  },
  relPathNormalize: {
    signature: "relPathNormalize(path: string): string",
    doc: "The relative `path` normalized lexically (`.` for the base itself). An absolute path, a `..` above the base, NUL, a backslash or a percent escape fails closed.",
  },
  urlWithin: {
    signature: "urlWithin(url: string, prefix: string): bool",
    doc: "True when `url` has the scheme, host and port of `prefix` and a path at or under the prefix's, segment by segment, after WHATWG parsing; a `file:` URI is compared with a `file:` prefix as `pathWithin` compares paths (with another scheme it fails closed). Userinfo, hidden characters, `//` or `;` in the path and escaped `.`, `/` or `%` fail closed.",
  },
  urlScheme: {
    signature: "urlScheme(url: string): string",
    doc: "The scheme of `url` in lower case: `http`, `https`, `ws` or `wss` (any other fails closed).",
  },
  urlHost: {
    signature: "urlHost(url: string): string",
    doc: "The host of `url` after WHATWG parsing: lower case, IDNA in its `xn--` form, IPv6 in brackets, one trailing dot removed.",
  },
  urlPort: { signature: "urlPort(url: string): int", doc: "The port of `url`: the one it names, or its scheme's default (80 or 443)." },
  urlPath: {
    signature: "urlPath(url: string): string",
    doc: "The path of `url` after WHATWG parsing (`.` and `..` resolved); `//`, `;`, an escaped `.`, `/`, `\\`, `%`, `;` or NUL fails closed.",
  },
  fileUriPath: {
    signature: "fileUriPath(uri: string): string",
    doc: "The absolute POSIX path a `file:` URI names, escapes decoded once and normalized as `pathNormalize` (compose with `pathWithin`). A host other than `localhost`, a query, an escaped `.`, `/`, `\\`, `%` or NUL, or a drive letter fails closed.",
  },
} as const;

function typeText(name: keyof typeof ENVIRONMENT_TYPES): string {
  const type = ENVIRONMENT_TYPES[name];
  return type === "approver" ? "string or null" : type;
}

export const VARIABLES: readonly BuiltinDoc[] = Object.freeze(
  (Object.keys(VARIABLE_DOCS) as (keyof typeof VARIABLE_DOCS)[]).map((name) => ({
    name,
    signature: name === "args" ? "args: map of dynamic values" : `${name}: ${typeText(name)}`,
    doc: VARIABLE_DOCS[name],
  })),
);

export const FUNCTIONS: readonly BuiltinDoc[] = Object.freeze(
  (Object.keys(FUNCTION_DOCS) as (keyof typeof FUNCTION_DOCS)[]).map((name) => ({ name, ...FUNCTION_DOCS[name] })),
);

const BY_NAME: ReadonlyMap<string, BuiltinDoc> = new Map([...VARIABLES, ...FUNCTIONS].map((d) => [d.name, d]));

/** The documentation of a built-in name or function; undefined for any other word. */
export function builtinDoc(name: string): BuiltinDoc | undefined {
  return BY_NAME.get(name);
}
