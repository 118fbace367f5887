// The gateway's YAML configuration: parsed with source positions, every error at file:line:col.
import { type Document, LineCounter, parseDocument } from "yaml";
import { rangeOf, SourceText } from "@agent-authority/families";
import { GATEWAY_DEFAULTS, GATEWAY_LIMITS } from "./limits.js";
import { parsePointer, type JsonPointer } from "./pointer.js";

/** A value read from the call's arguments by a JSON Pointer, or a constant. */
export type ValueSource<T> =
  | { readonly kind: "constant"; readonly value: T }
  | { readonly kind: "pointer"; readonly pointer: JsonPointer; readonly text: string };

export interface StdioUpstream {
  readonly kind: "stdio";
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** Relative to the configuration file's directory. */
  readonly cwd: string | undefined;
  readonly timeoutMs: number;
  readonly restart: RestartPolicy | undefined;
}

/** How an upstream that went away is restarted: waits doubling from `initialMs` up to `maxMs`; undefined: never. */
export interface RestartPolicy {
  readonly initialMs: number;
  readonly maxMs: number;
}

export interface HttpUpstream {
  readonly kind: "http";
  readonly name: string;
  readonly url: string;
  /** The environment variable whose value is sent as `Authorization: Bearer …` (another gateway's listener token). */
  readonly tokenEnv: string | undefined;
  readonly timeoutMs: number;
  readonly restart: RestartPolicy | undefined;
}

export type UpstreamConfig = StdioUpstream | HttpUpstream;

/** How one upstream tool's call becomes an action for `POST /v1/authorize`. */
export interface ToolMapping {
  /** The action's `tool`; default `<upstream>.<tool>`. */
  readonly tool: string | undefined;
  readonly amount: ValueSource<number> | undefined;
  readonly currency: ValueSource<string> | undefined;
  /** Policy argument name and where its value is in the call's arguments. */
  readonly args: readonly { readonly name: string; readonly pointer: JsonPointer; readonly text: string }[];
  /** Where the actual cost (minor units) is in the tool's result, for settlement. */
  readonly cost: { readonly pointer: JsonPointer; readonly text: string } | undefined;
}

export interface GatewayConfig {
  readonly authority: {
    readonly url: string;
    readonly keyEnv: string;
    readonly grantId: string;
    readonly timeoutMs: number;
    readonly attempts: number;
    readonly consoleUrl: string;
    /**
     * Verify every decision (docs/verification.md): a JWKS file, relative to the configuration's
     * folder (pinned, the recommended form), or `fetch-once`, the default.
     */
    readonly signingKeys: string | undefined;
    /** UNSAFE, opt-in by name: obey answers without verifying them. */
    readonly allowUnsignedAnswers: boolean;
  };
  readonly attestation: { readonly content_hash: string; readonly provenance_version: string } | undefined;
  readonly approval: { readonly waitSeconds: number; readonly pollMs: number };
  /** The streamable HTTP listener (`--listen`): its bearer token's variable and the idle timeout of a session. */
  readonly http: { readonly tokenEnv: string | undefined; readonly sessionIdleSeconds: number };
  readonly upstreams: readonly UpstreamConfig[];
  /** Keyed by `<upstream>.<tool>`, the upstream's own tool name. */
  readonly tools: ReadonlyMap<string, ToolMapping>;
}

export interface ConfigDiagnostic {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** Lower case, no final period, the user's input in backticks. */
  readonly message: string;
}

export type ConfigResult =
  | { readonly ok: true; readonly config: GatewayConfig }
  | { readonly ok: false; readonly diagnostics: readonly ConfigDiagnostic[] };

type Path = readonly (string | number)[];
type Fields = Record<string, unknown>;

const UPSTREAM_NAME = /^[a-z][a-z0-9_-]{0,63}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const GRANT_ID = /^grt_[0-9a-z]{26}$/;
const ACTION_TOOL = /^[A-Za-z0-9_.:-]{1,128}$/;
const POLICY_ARG = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const CURRENCY = /^[A-Z]{3}$/;

/** Collects errors with the position of the YAML node each one is about. */
class Checker {
  readonly diagnostics: ConfigDiagnostic[] = [];
  constructor(
    private readonly source: SourceText,
    private readonly doc: Document,
  ) {}

  error(path: Path, message: string, at: "value" | "key" = "value"): void {
    const { start } = rangeOf(this.source, this.doc, path, at);
    this.diagnostics.push({ file: this.source.file, line: start.line, column: start.column, message });
  }

  /** The object at `path` with only the keys `allowed`; an unknown key is an error at that key. */
  object(value: unknown, path: Path, allowed: readonly string[]): Fields | undefined {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      this.error(path, `\`${label(path)}\` must be a mapping`);
      return undefined;
    }
    for (const key of Object.keys(value))
      if (!allowed.includes(key))
        this.error(
          [...path, key],
          `unknown key \`${key}\` in \`${label(path)}\`; expected one of ${allowed.map((k) => `\`${k}\``).join(", ")}`,
          "key",
        );
    return value as Fields;
  }

  string(fields: Fields, key: string, path: Path, pattern?: RegExp, required = true): string | undefined {
    const value = fields[key];
    if (value === undefined) {
      if (required) this.error(path, `\`${label(path)}\` needs \`${key}\``);
      return undefined;
    }
    if (typeof value !== "string" || (pattern !== undefined && !pattern.test(value))) {
      this.error(
        [...path, key],
        `\`${label([...path, key])}\` must be ${pattern === undefined ? "a string" : `a string matching \`${pattern.source}\``}, not \`${shown(value)}\``,
      );
      return undefined;
    }
    return value;
  }

  integer(fields: Fields, key: string, path: Path, min: number, max: number, fallback: number): number {
    const value = fields[key];
    if (value === undefined) return fallback;
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) {
      this.error([...path, key], `\`${label([...path, key])}\` must be an integer from ${min} to ${max}, not \`${shown(value)}\``);
      return fallback;
    }
    return value;
  }

  pointer(value: unknown, path: Path): { pointer: JsonPointer; text: string } | undefined {
    if (typeof value !== "string" || value.length > GATEWAY_LIMITS.pointerCharsMax) {
      this.error(
        path,
        `\`${label(path)}\` must be a JSON Pointer such as \`/path\` (at most ${GATEWAY_LIMITS.pointerCharsMax} characters)`,
      );
      return undefined;
    }
    const parsed = parsePointer(value, GATEWAY_LIMITS.pointerTokensMax);
    if (typeof parsed === "string") {
      this.error(path, `\`${label(path)}\`: ${parsed}`);
      return undefined;
    }
    return { pointer: parsed, text: value };
  }
}

function label(path: Path): string {
  return path.length === 0 ? "(top level)" : path.join(".");
}

function shown(value: unknown): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Parses and checks a configuration; never throws for what the file says. */
export function parseGatewayConfig(text: string, file: string): ConfigResult {
  if (text.length > GATEWAY_LIMITS.configBytesMax) {
    return {
      ok: false,
      diagnostics: [{ file, line: 1, column: 1, message: `the configuration is larger than ${GATEWAY_LIMITS.configBytesMax} bytes` }],
    };
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      diagnostics: doc.errors.map((error) => {
        const at = lines.linePos(error.pos[0]);
        return { file, line: at.line, column: at.col, message: `yaml: ${error.message.split("\n")[0]!.replace(/\.$/, "").toLowerCase()}` };
      }),
    };
  }
  let plain: unknown;
  try {
    plain = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    // An alias without its anchor, or aliases that expand past the bound, cannot become values.
    const message = error instanceof Error ? error.message.split("\n")[0]!.replace(/\.$/, "").toLowerCase() : String(error);
    return { ok: false, diagnostics: [{ file, line: 1, column: 1, message: `yaml: ${message}` }] };
  }
  const checker = new Checker(new SourceText(file, text, lines), doc);
  const config = readConfig(checker, plain);
  const diagnostics = [...checker.diagnostics].sort((a, b) => a.line - b.line || a.column - b.column);
  return diagnostics.length > 0 || config === undefined ? { ok: false, diagnostics } : { ok: true, config };
}

function readConfig(c: Checker, root: unknown): GatewayConfig | undefined {
  const top = c.object(root ?? {}, [], ["authority", "attestation", "approval", "http", "upstreams", "tools"]);
  if (top === undefined) return undefined;
  const authority = readAuthority(c, top["authority"]);
  const attestation = readAttestation(c, top["attestation"]);
  const approval = readApproval(c, top["approval"]);
  const http = readHttp(c, top["http"]);
  const upstreams = readUpstreams(c, top["upstreams"]);
  const tools = readTools(c, top["tools"], upstreams);
  if (authority === undefined) return undefined;
  return { authority, attestation, approval, http, upstreams, tools };
}

/**
 * `authority.url`: an http(s) URL ending in `/v1`, and https unless it is loopback or
 * `allow_insecure_http` accepts the clear text. Answers the URL as written (checked or not).
 */
function authorityUrl(c: Checker, fields: Record<string, unknown>): string | undefined {
  const path = ["authority"];
  const url = c.string(fields, "url", path);
  if (url !== undefined && !isBaseUrl(url))
    c.error([...path, "url"], `\`authority.url\` must be an http(s) URL ending in \`/v1\`, not \`${shown(url)}\``);
  const insecure = fields["allow_insecure_http"];
  if (insecure !== undefined && typeof insecure !== "boolean")
    c.error(
      [...path, "allow_insecure_http"],
      `\`authority.allow_insecure_http\` must be \`true\` or \`false\`, not \`${shown(insecure)}\``,
    );
  if (url !== undefined && isBaseUrl(url) && !isHttpsOrLoopback(url) && insecure !== true) {
    c.error(
      [...path, "url"],
      `\`authority.url\` must be https, or http on a loopback address: decisions and the agent's key would cross the network in the clear (set \`allow_insecure_http: true\` to accept that)`,
    );
  }
  return url;
}

function readAuthority(c: Checker, value: unknown): GatewayConfig["authority"] | undefined {
  if (value === undefined) {
    c.error([], "the configuration needs `authority` (its `url`, `key_env` and `grant_id`)");
    return undefined;
  }
  const fields = c.object(
    value,
    ["authority"],
    [
      "url",
      "key_env",
      "grant_id",
      "timeout_ms",
      "attempts",
      "console_url",
      "signing_keys",
      "allow_insecure_http",
      "allow_unsigned_answers",
    ],
  );
  if (fields === undefined) return undefined;
  const path = ["authority"];
  const url = authorityUrl(c, fields);
  const keyEnv = c.string(fields, "key_env", path, ENV_NAME);
  const grantId = c.string(fields, "grant_id", path, GRANT_ID);
  const timeoutMs = c.integer(
    fields,
    "timeout_ms",
    path,
    GATEWAY_LIMITS.authorityTimeoutMsMin,
    GATEWAY_LIMITS.authorityTimeoutMsMax,
    GATEWAY_DEFAULTS.authorityTimeoutMs,
  );
  const attempts = c.integer(fields, "attempts", path, 1, GATEWAY_LIMITS.authorityAttemptsMax, GATEWAY_DEFAULTS.authorityAttempts);
  const consoleUrl = c.string(fields, "console_url", path, /^https?:\/\/\S+$/, false);
  const signingKeys = c.string(fields, "signing_keys", path, /^\S.{0,1023}$/, false);
  const unsigned = unsignedAnswers(c, fields, signingKeys);
  if (url === undefined || keyEnv === undefined || grantId === undefined || !isBaseUrl(url)) return undefined;
  return {
    url,
    keyEnv,
    grantId,
    timeoutMs,
    attempts,
    consoleUrl: consoleUrl ?? `${url.replace(/\/+$/, "").replace(/\/v1$/, "")}/console`,
    signingKeys,
    allowUnsignedAnswers: unsigned,
  };
}

/** `authority.allow_unsigned_answers`: the unsafe opt-out, a boolean that excludes pinned keys. */
function unsignedAnswers(c: Checker, fields: Record<string, unknown>, signingKeys: string | undefined): boolean {
  const path = ["authority", "allow_unsigned_answers"];
  const unsigned = fields["allow_unsigned_answers"];
  if (unsigned !== undefined && typeof unsigned !== "boolean")
    c.error(path, `\`authority.allow_unsigned_answers\` must be \`true\` or \`false\`, not \`${shown(unsigned)}\``);
  if (unsigned === true && signingKeys !== undefined)
    c.error(path, "`authority.allow_unsigned_answers: true` and `signing_keys` exclude each other");
  return unsigned === true;
}

/** https anywhere, or http to this machine (127.0.0.0/8, [::1], localhost). */
function isHttpsOrLoopback(url: string): boolean {
  const parsed = new URL(url);
  return parsed.protocol === "https:" || /^(127(\.\d{1,3}){3}|\[::1\]|localhost)$/.test(parsed.hostname);
}

function isBaseUrl(url: string): boolean {
  try {
    const parsed = new URL(url);
    return (
      (parsed.protocol === "http:" || parsed.protocol === "https:") &&
      /\/v1\/?$/.test(parsed.pathname) &&
      parsed.username === "" &&
      parsed.password === ""
    );
  } catch {
    return false;
  }
}

function readAttestation(c: Checker, value: unknown): GatewayConfig["attestation"] {
  if (value === undefined) return undefined;
  const fields = c.object(value, ["attestation"], ["content_hash", "provenance_version"]);
  if (fields === undefined) return undefined;
  const contentHash = c.string(fields, "content_hash", ["attestation"], /^\S{1,256}$/);
  const provenance = c.string(fields, "provenance_version", ["attestation"], /^\S{1,256}$/);
  return contentHash === undefined || provenance === undefined ? undefined : { content_hash: contentHash, provenance_version: provenance };
}

function readApproval(c: Checker, value: unknown): GatewayConfig["approval"] {
  const fallback = { waitSeconds: GATEWAY_DEFAULTS.approvalWaitSeconds, pollMs: GATEWAY_DEFAULTS.approvalPollMs };
  if (value === undefined) return fallback;
  const fields = c.object(value, ["approval"], ["wait_seconds", "poll_ms"]);
  if (fields === undefined) return fallback;
  return {
    waitSeconds: c.integer(fields, "wait_seconds", ["approval"], 0, GATEWAY_LIMITS.approvalWaitSecondsMax, fallback.waitSeconds),
    pollMs: c.integer(fields, "poll_ms", ["approval"], GATEWAY_LIMITS.approvalPollMsMin, GATEWAY_LIMITS.approvalPollMsMax, fallback.pollMs),
  };
}

function readHttp(c: Checker, value: unknown): GatewayConfig["http"] {
  const fallback = { tokenEnv: undefined, sessionIdleSeconds: GATEWAY_DEFAULTS.httpSessionIdleSeconds };
  if (value === undefined) return fallback;
  const fields = c.object(value, ["http"], ["token_env", "session_idle_seconds"]);
  if (fields === undefined) return fallback;
  return {
    tokenEnv: c.string(fields, "token_env", ["http"], ENV_NAME, false),
    sessionIdleSeconds: c.integer(
      fields,
      "session_idle_seconds",
      ["http"],
      GATEWAY_LIMITS.httpSessionIdleSecondsMin,
      GATEWAY_LIMITS.httpSessionIdleSecondsMax,
      fallback.sessionIdleSeconds,
    ),
  };
}

function readUpstreams(c: Checker, value: unknown): UpstreamConfig[] {
  if (value === undefined) {
    c.error([], "the configuration needs `upstreams`: at least one MCP server, by `command` or `url`");
    return [];
  }
  const fields = c.object(value, ["upstreams"], Object.keys(value ?? {}));
  if (fields === undefined) return [];
  const names = Object.keys(fields);
  if (names.length === 0 || names.length > GATEWAY_LIMITS.upstreamsMax)
    c.error(["upstreams"], `\`upstreams\` must name from 1 to ${GATEWAY_LIMITS.upstreamsMax} MCP servers`);
  const upstreams: UpstreamConfig[] = [];
  for (const name of names.slice(0, GATEWAY_LIMITS.upstreamsMax)) {
    if (!UPSTREAM_NAME.test(name)) {
      c.error(
        ["upstreams", name],
        `the upstream name \`${shown(name)}\` must match \`${UPSTREAM_NAME.source}\` (no dots: tools are named \`<upstream>.<tool>\`)`,
        "key",
      );
      continue;
    }
    const upstream = readUpstream(c, name, fields[name]);
    if (upstream !== undefined) upstreams.push(upstream);
  }
  return upstreams;
}

function readUpstream(c: Checker, name: string, value: unknown): UpstreamConfig | undefined {
  const path = ["upstreams", name];
  const fields = c.object(value, path, ["command", "args", "env", "cwd", "url", "token_env", "timeout_ms", "restart"]);
  if (fields === undefined) return undefined;
  const timeoutMs = c.integer(
    fields,
    "timeout_ms",
    path,
    GATEWAY_LIMITS.upstreamTimeoutMsMin,
    GATEWAY_LIMITS.upstreamTimeoutMsMax,
    GATEWAY_DEFAULTS.upstreamTimeoutMs,
  );
  const restart = readRestart(c, fields["restart"], [...path, "restart"]);
  if ((fields["command"] === undefined) === (fields["url"] === undefined)) {
    c.error(path, `the upstream \`${name}\` needs exactly one of \`command\` (run over stdio) and \`url\` (streamable HTTP)`);
    return undefined;
  }
  if (fields["url"] !== undefined) {
    for (const key of ["args", "env", "cwd"])
      if (fields[key] !== undefined) c.error([...path, key], `\`${key}\` is for a \`command\` upstream, not a \`url\` one`, "key");
    const url = c.string(fields, "url", path, /^https?:\/\/\S+$/);
    const tokenEnv = c.string(fields, "token_env", path, ENV_NAME, false);
    return url === undefined ? undefined : { kind: "http", name, url, tokenEnv, timeoutMs, restart };
  }
  if (fields["token_env"] !== undefined) c.error([...path, "token_env"], "`token_env` is for a `url` upstream, not a `command` one", "key");
  const command = c.string(fields, "command", path, /^\S.{0,1023}$/);
  const args = stringList(c, fields["args"], [...path, "args"]);
  const env = stringMap(c, fields["env"], [...path, "env"]);
  const cwd = c.string(fields, "cwd", path, /^.{1,4096}$/, false);
  return command === undefined ? undefined : { kind: "stdio", name, command, args, env, cwd, timeoutMs, restart };
}

/** `restart`: absent (the defaults), `false` (never), or `{initial_ms, max_ms}`. */
function readRestart(c: Checker, value: unknown, path: Path): RestartPolicy | undefined {
  const fallback = { initialMs: GATEWAY_DEFAULTS.restartInitialMs, maxMs: GATEWAY_DEFAULTS.restartMaxMs };
  if (value === undefined || value === true) return fallback;
  if (value === false) return undefined;
  const fields = c.object(value, path, ["initial_ms", "max_ms"]);
  if (fields === undefined) return fallback;
  const initialMs = c.integer(
    fields,
    "initial_ms",
    path,
    GATEWAY_LIMITS.restartInitialMsMin,
    GATEWAY_LIMITS.restartMsMax,
    fallback.initialMs,
  );
  const maxMs = c.integer(fields, "max_ms", path, GATEWAY_LIMITS.restartInitialMsMin, GATEWAY_LIMITS.restartMsMax, fallback.maxMs);
  if (maxMs < initialMs) c.error([...path, "max_ms"], `\`max_ms\` (${maxMs}) must be at least \`initial_ms\` (${initialMs})`);
  return { initialMs, maxMs };
}

function stringList(c: Checker, value: unknown, path: Path): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > 256 || !value.every((item) => typeof item === "string" || typeof item === "number")) {
    c.error(path, `\`${label(path)}\` must be a list of at most 256 strings`);
    return [];
  }
  return value.map(String);
}

function stringMap(c: Checker, value: unknown, path: Path): Record<string, string> {
  if (value === undefined) return {};
  const fields = c.object(value, path, Object.keys(value ?? {}));
  if (fields === undefined) return {};
  const env: Record<string, string> = {};
  for (const [key, item] of Object.entries(fields)) {
    if (!ENV_NAME.test(key)) c.error([...path, key], `\`${shown(key)}\` is not an environment variable name`, "key");
    else if (typeof item !== "string" && typeof item !== "number") c.error([...path, key], `\`${label([...path, key])}\` must be a string`);
    else env[key] = String(item);
  }
  return env;
}

function readTools(c: Checker, value: unknown, upstreams: readonly UpstreamConfig[]): Map<string, ToolMapping> {
  const tools = new Map<string, ToolMapping>();
  if (value === undefined) return tools;
  const fields = c.object(value, ["tools"], Object.keys(value ?? {}));
  if (fields === undefined) return tools;
  if (Object.keys(fields).length > GATEWAY_LIMITS.mappedToolsMax)
    c.error(["tools"], `\`tools\` maps at most ${GATEWAY_LIMITS.mappedToolsMax} tools`);
  for (const [key, item] of Object.entries(fields).slice(0, GATEWAY_LIMITS.mappedToolsMax)) {
    const dot = key.indexOf(".");
    const upstream = dot < 0 ? "" : key.slice(0, dot);
    if (dot < 1 || dot === key.length - 1 || !upstreams.some((u) => u.name === upstream)) {
      c.error(["tools", key], `\`${shown(key)}\` must be \`<upstream>.<tool>\` with an upstream named in \`upstreams\``, "key");
      continue;
    }
    const mapping = readMapping(c, item ?? {}, ["tools", key]);
    if (mapping !== undefined) tools.set(key, mapping);
  }
  return tools;
}

function readMapping(c: Checker, value: unknown, path: Path): ToolMapping | undefined {
  const fields = c.object(value, path, ["tool", "amount", "currency", "args", "cost"]);
  if (fields === undefined) return undefined;
  const tool = c.string(fields, "tool", path, ACTION_TOOL, false);
  const amount = readSource(
    c,
    fields["amount"],
    [...path, "amount"],
    (v) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0,
    "a non-negative integer (minor units)",
  );
  const currency = readSource(
    c,
    fields["currency"],
    [...path, "currency"],
    (v) => typeof v === "string" && CURRENCY.test(v),
    "a currency code such as `EUR`",
  );
  if ((amount === undefined) !== (currency === undefined))
    c.error(path, `\`${label(path)}\` needs both \`amount\` and \`currency\`, or neither`);
  const args = readArgs(c, fields["args"], [...path, "args"]);
  const cost = fields["cost"] === undefined ? undefined : c.pointer(fields["cost"], [...path, "cost"]);
  return { tool, amount: amount as ValueSource<number> | undefined, currency: currency as ValueSource<string> | undefined, args, cost };
}

/** A string starting with `/` is a JSON Pointer into the arguments; anything else must be a valid constant. */
function readSource(
  c: Checker,
  value: unknown,
  path: Path,
  valid: (v: unknown) => boolean,
  what: string,
): ValueSource<unknown> | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "string" && value.startsWith("/")) {
    const pointer = c.pointer(value, path);
    return pointer === undefined ? undefined : { kind: "pointer", ...pointer };
  }
  if (!valid(value)) {
    c.error(path, `\`${label(path)}\` must be a JSON Pointer into the arguments (starting with \`/\`) or ${what}, not \`${shown(value)}\``);
    return undefined;
  }
  return { kind: "constant", value };
}

/** `args: [path, mode]` passes those top-level arguments; `args: {name: /pointer}` names each one. */
function readArgs(c: Checker, value: unknown, path: Path): ToolMapping["args"] {
  if (value === undefined) return [];
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((name) => [String(name), typeof name === "string" ? `/${name.replace(/~/g, "~0").replace(/\//g, "~1")}` : null])
    : Object.entries(c.object(value, path, Object.keys(value ?? {})) ?? {});
  if (entries.length > GATEWAY_LIMITS.policyArgsMax)
    c.error(path, `\`${label(path)}\` passes at most ${GATEWAY_LIMITS.policyArgsMax} arguments`);
  const args: { name: string; pointer: JsonPointer; text: string }[] = [];
  entries.slice(0, GATEWAY_LIMITS.policyArgsMax).forEach(([name, pointerText], index) => {
    const at = Array.isArray(value) ? [...path, index] : [...path, name];
    if (!POLICY_ARG.test(name)) {
      c.error(
        at,
        `the policy argument name \`${shown(name)}\` must match \`${POLICY_ARG.source}\``,
        Array.isArray(value) ? "value" : "key",
      );
      return;
    }
    const pointer = c.pointer(pointerText, at);
    if (pointer !== undefined) args.push({ name, ...pointer });
  });
  return args;
}
