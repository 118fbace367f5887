// The argument parser over node:util parseArgs: what it accepts, and every mistake a usage error.
import { describe, expect, it } from "vitest";
import { flag, option, options, parseArgs, UsageError } from "./args.js";

const KINDS = { format: "string", role: "string", strict: "boolean" } as const;

describe("parseArgs", () => {
  it("takes positionals, flags, `--name value`, `--name=value`, repeats and `--`", () => {
    const args = parseArgs(["a", "--format", "json", "--role=admin", "--role", "issuer", "--strict", "-", "--", "--not-an-option"], KINDS);
    expect(args.positionals).toEqual(["a", "-", "--not-an-option"]);
    expect(option(args, "format")).toBe("json");
    expect(options(args, "role")).toEqual(["admin", "issuer"]);
    expect(flag(args, "strict")).toBe(true);
    expect(flag(args, "format") && !flag(args, "missing")).toBe(true);
  });

  it("keeps the last of a repeated single option, and a value that starts with a dash", () => {
    expect(option(parseArgs(["--format", "text", "--format", "json"], KINDS), "format")).toBe("json");
    expect(option(parseArgs(["--format", "-"], KINDS), "format")).toBe("-");
  });

  it.each([
    [["--colour"], "unknown option `--colour`"],
    [["--colour=1"], "unknown option `--colour`"],
    [["-x"], "unknown option `-x`"],
    [["-f"], "unknown option `-f`"],
    [["--strict=yes"], "option `--strict` takes no value"],
    [["--format"], "option `--format` needs a value"],
    [["--constructor"], "unknown option `--constructor`"],
    [["--__proto__", "x"], "unknown option `--__proto__`"],
  ])("refuses %j: %s", (argv, message) => {
    expect(() => parseArgs(argv, KINDS)).toThrow(UsageError);
    expect(() => parseArgs(argv, KINDS)).toThrow(message);
  });
});
