// A small argument parser: positionals, `--flag`, `--name value` and `--name=value`.

export interface ParsedArgs {
  readonly positionals: readonly string[];
  readonly flags: ReadonlyMap<string, readonly string[]>;
}

export class UsageError extends Error {}

/**
 * Parses `argv` against the options a command declares: `boolean` options take no value, the
 * others take one (repeatable). An undeclared option is a usage error, never silently ignored.
 */
export function parseArgs(argv: readonly string[], options: Readonly<Record<string, "boolean" | "string">>): ParsedArgs {
  const positionals: string[] = [];
  const flags = new Map<string, string[]>();
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith("--") || arg === "-") {
      if (arg.startsWith("-") && arg !== "-") throw new UsageError(`unknown option \`${arg}\``);
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
    // An own option only: `--constructor` is as unknown as any other name.
    const kind = Object.hasOwn(options, name) ? options[name] : undefined;
    if (kind === undefined) throw new UsageError(`unknown option \`--${name}\``);
    let value: string;
    if (kind === "boolean") {
      if (eq >= 0) throw new UsageError(`option \`--${name}\` takes no value`);
      value = "true";
    } else if (eq >= 0) {
      value = arg.slice(eq + 1);
    } else {
      const next = argv[i + 1];
      if (next === undefined) throw new UsageError(`option \`--${name}\` needs a value`);
      value = next;
      i += 1;
    }
    flags.set(name, [...(flags.get(name) ?? []), value]);
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
