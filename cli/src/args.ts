// Command-line arguments through `node:util` parseArgs: positionals, `--flag`, `--name value` and `--name=value`.
import { parseArgs as parseTokens } from "node:util";

export interface ParsedArgs {
  readonly positionals: readonly string[];
  readonly flags: ReadonlyMap<string, readonly string[]>;
}

export class UsageError extends Error {}

type OptionKinds = Readonly<Record<string, "boolean" | "string">>;

/**
 * Parses `argv` against the options a command declares: `boolean` options take no value, the
 * others take one (repeatable). Node's parser splits the words; this function then refuses what
 * it lets through in its lenient mode, so an undeclared option is a usage error, never ignored,
 * and every message names the option in backticks.
 */
export function parseArgs(argv: readonly string[], options: OptionKinds): ParsedArgs {
  const declared = Object.fromEntries(Object.entries(options).map(([name, type]) => [name, { type, multiple: true }]));
  const { tokens } = parseTokens({ args: [...argv], options: declared, strict: false, allowPositionals: true, tokens: true });
  const positionals: string[] = [];
  const flags = new Map<string, string[]>();
  for (const token of tokens) {
    if (token.kind === "positional") positionals.push(token.value);
    if (token.kind !== "option") continue;
    // An own option only: `--constructor` is as unknown as any other name.
    const kind = Object.hasOwn(options, token.name) && token.rawName.startsWith("--") ? options[token.name] : undefined;
    if (kind === undefined) throw new UsageError(`unknown option \`${token.rawName}\``);
    if (kind === "boolean" && token.value !== undefined) throw new UsageError(`option \`--${token.name}\` takes no value`);
    if (kind === "string" && token.value === undefined) throw new UsageError(`option \`--${token.name}\` needs a value`);
    flags.set(token.name, [...(flags.get(token.name) ?? []), token.value ?? "true"]);
  }
  return { positionals, flags };
}

export function flag(args: ParsedArgs, name: string): boolean {
  return args.flags.has(name);
}

export function option(args: ParsedArgs, name: string): string | undefined {
  const values = args.flags.get(name);
  return values === undefined ? undefined : values[values.length - 1];
}

export function options(args: ParsedArgs, name: string): readonly string[] {
  return args.flags.get(name) ?? [];
}

export function choice<T extends string>(args: ParsedArgs, name: string, allowed: readonly T[], fallback: T): T {
  const value = option(args, name);
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new UsageError(`\`--${name}\` must be one of ${allowed.map((a) => `\`${a}\``).join(", ")}, not \`${value}\``);
  }
  return value as T;
}

/** A whole number option, 0 or more, at most `Number.MAX_SAFE_INTEGER`. */
export function count(args: ParsedArgs, name: string, fallback: number): number {
  const value = option(args, name);
  if (value === undefined) return fallback;
  if (!/^(0|[1-9][0-9]{0,14})$/.test(value)) throw new UsageError(`\`--${name}\` must be a whole number, not \`${value}\``);
  return Number(value);
}
