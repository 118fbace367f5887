// `authority signature verify`: check offline, with the SDK's one verifier (either form, decision
// 1901), that a saved decision or settlement answer was signed by the server (a key of its JWKS)
// and says what the counterparty expects: tool, amount, grant, outcome, nonce. Nothing is sent
// anywhere (docs/verification.md).
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { resolve } from "node:path";
import { signedStatement, SigningKeyring, type SigningKeySet } from "@agent-authority/sdk";
import { choice, option, parseArgs, UsageError } from "../args.js";
import { type Command, EXIT } from "../command.js";
import type { Terminal } from "../terminal.js";

/** Bounds on what the command reads. */
export const SIGNATURE_VERIFY_LIMITS = Object.freeze({ answerBytesMax: 1_048_576, keysBytesMax: 262_144 });

/** A JSON file of at most `bytesMax` bytes, parsed; a usage error naming the file and position when it is not. */
export function readJson(cwd: string, path: string, bytesMax: number, what: string, parse = true): unknown {
  const file = resolve(cwd, path);
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    throw new UsageError(`${path}: cannot read the ${what}`);
  }
  try {
    if (fstatSync(fd).size > bytesMax) throw new UsageError(`${path}: the ${what} is larger than ${bytesMax} bytes`);
    const bytes = Buffer.alloc(bytesMax + 1);
    const length = readSync(fd, bytes, 0, bytes.length, 0);
    if (length > bytesMax) throw new UsageError(`${path}: the ${what} is larger than ${bytesMax} bytes`);
    const text = bytes.subarray(0, length).toString("utf8");
    if (!parse) return text;
    try {
      return JSON.parse(text);
    } catch (error) {
      const at = /position (\d+)/.exec(String(error))?.[1];
      const offset = at === undefined ? text.length : Number(at);
      const before = text.slice(0, offset).split("\n");
      throw new UsageError(`${path}:${before.length}:${before[before.length - 1]!.length + 1}: the ${what} is not JSON`);
    }
  } finally {
    closeSync(fd);
  }
}

/** The statement members a caller may require, by option name. */
const EXPECTED = {
  tool: "tool",
  grant: "grant_id",
  outcome: "outcome",
  nonce: "nonce",
  "ledger-id": "ledger_id",
  currency: "currency",
} as const;

export const signatureVerifyCommand: Command = {
  name: "signature verify",
  summary: "check offline that a saved decision or settlement answer is signed by the server",
  usage: `authority signature verify ANSWER.json --keys KEYS.json [--tool T] [--amount N] [--grant G]
                                 [--outcome O] [--nonce N] [--ledger-id L] [--currency C]

Verifies the Ed25519 signature of an answer of POST /v1/authorize or of a settlement, with the
public keys in KEYS.json: over the root of the batch its statement was signed in, to which the
statement's inclusion path must lead (\`v\` 2), or over the canonical JSON (RFC 8785) of its
statement (answers without \`v\`). KEYS.json is the JWKS of GET /v1/signing-keys (e.g. saved
by \`authority signing-keys list --format json\`). Each option given must equal the statement's
member: an answer about another tool, amount or grant is refused.
Offline: nothing is sent anywhere.

  --keys FILE      the server's JWKS
  --amount N       the amount in minor units the statement must name
  --format FORMAT  text (default) or json

Exit status: 0 verified, 1 not signed by these keys or not what was expected, 2 usage error.
`,
  available: true,
  async run(argv, terminal) {
    const args = parseArgs(argv, {
      keys: "string",
      amount: "string",
      tool: "string",
      grant: "string",
      outcome: "string",
      nonce: "string",
      "ledger-id": "string",
      currency: "string",
      format: "string",
    });
    const format = choice(args, "format", ["text", "json"] as const, "text");
    if (args.positionals.length !== 1) throw new UsageError("name one answer file to verify");
    const keysPath = option(args, "keys");
    if (keysPath === undefined) throw new UsageError("give the server's JWKS with `--keys FILE`");
    const amountText = option(args, "amount");
    if (amountText !== undefined && !/^(0|[1-9][0-9]{0,15})$/.test(amountText))
      throw new UsageError(`\`--amount\` must be a whole number of minor units, not \`${amountText}\``);
    const answer = readJson(terminal.cwd, args.positionals[0]!, SIGNATURE_VERIFY_LIMITS.answerBytesMax, "answer");
    const keys = readJson(terminal.cwd, keysPath, SIGNATURE_VERIFY_LIMITS.keysBytesMax, "key set");
    if (typeof answer !== "object" || answer === null || Array.isArray(answer))
      return report(terminal, format, { ok: false, reason: "unsigned", message: "the answer is not a JSON object" });
    const checked = await signedStatement(answer as Record<string, unknown>, new SigningKeyring(keys as SigningKeySet));
    if ("failure" in checked)
      return report(terminal, format, { ok: false, reason: checked.failure.reason, message: checked.failure.message });
    const expected: Record<string, unknown> = {};
    for (const [name, member] of Object.entries(EXPECTED)) if (option(args, name) !== undefined) expected[member] = option(args, name);
    if (amountText !== undefined) expected["amount_minor"] = Number(amountText);
    for (const [member, value] of Object.entries(expected)) {
      if (checked.statement[member] !== value) {
        return report(terminal, format, {
          ok: false,
          reason: "mismatch",
          message: `the signed \`${member}\` is \`${JSON.stringify(checked.statement[member])}\`, not \`${JSON.stringify(value)}\``,
          statement: checked.statement,
        });
      }
    }
    return report(terminal, format, { ok: true, statement: checked.statement });
  },
};

interface Outcome {
  ok: boolean;
  reason?: string;
  message?: string;
  statement?: Record<string, unknown>;
}

function report(terminal: Terminal, format: "text" | "json", outcome: Outcome): number {
  if (format === "json") terminal.out.write(`${JSON.stringify(outcome, null, 2)}\n`);
  else if (outcome.ok) {
    terminal.out.write("verified: signed by the server\n");
    for (const [name, value] of Object.entries(outcome.statement!)) terminal.out.write(`  ${name}: ${JSON.stringify(value)}\n`);
  } else {
    terminal.out.write(`not verified (${outcome.reason}): ${outcome.message}\n`);
  }
  return outcome.ok ? EXIT.ok : EXIT.failed;
}
