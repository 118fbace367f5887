// `authority receipt verify`: check offline that a saved receipt (GET /v1/decisions/{id}/receipt)
// proves its decision and settlements: the checkpoint's signature, each record's hash and inclusion
// in the checkpoint's tree, and the server's signature over the whole. Nothing is sent anywhere.
import { RECEIPT_LIMITS, verifyReceipt, type CheckpointKey } from "@agent-authority/sdk";
import { choice, option, parseArgs, UsageError } from "../args.js";
import { type Command, EXIT } from "../command.js";
import { paint } from "../terminal.js";
import { readJson, SIGNATURE_VERIFY_LIMITS } from "./signature.js";

export const receiptVerifyCommand: Command = {
  name: "receipt verify",
  summary: "check offline that a saved decision receipt is proved by a checkpoint the server signed",
  usage: `authority receipt verify RECEIPT.json --keys KEYS.json [--format text|json]

Checks a receipt of GET /v1/decisions/{ledger_id}/receipt with nothing but the server's public keys
(KEYS.json, the JWKS of GET /v1/signing-keys as you saved it): the checkpoint it carries is signed
by one of those keys; the decision record and each settlement hash to what was sealed, are in
canonical form, and are proved at their leaf of the checkpoint's Merkle tree (RFC 9162); each
settlement settles this decision later in its chain; the server's signature covers the receipt as a
whole, so that no member was changed, added or left out. Offline: it works with the server stopped.

Exit status: 0 verified, 1 not verified (the member that fails is named), 2 usage error.
`,
  available: true,
  async run(argv, terminal) {
    const args = parseArgs(argv, { keys: "string", format: "string" });
    const format = choice(args, "format", ["text", "json"] as const, "text");
    if (args.positionals.length !== 1) throw new UsageError("name one receipt file to verify");
    const keysPath = option(args, "keys");
    if (keysPath === undefined) throw new UsageError("give the server's JWKS with `--keys FILE`");
    const receipt = readJson(terminal.cwd, args.positionals[0]!, RECEIPT_LIMITS.bytesMax, "receipt");
    const keySet = readJson(terminal.cwd, keysPath, SIGNATURE_VERIFY_LIMITS.keysBytesMax, "key set");
    const keys = (keySet as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(keys)) throw new UsageError(`${keysPath}: the key set is a JWKS, an object with \`keys\``);
    const result = verifyReceipt(receipt, keys as CheckpointKey[]);
    const p = paint(terminal.color);
    if (format === "json") terminal.out.write(`${JSON.stringify(result, null, 2)}\n`);
    else if (result.ok) {
      const record = result.record;
      terminal.out.write(
        `${p.green("verified")}: decision \`${result.ledger_id}\` is leaf ${result.leaf_index} of the tree of ${result.tree_size} records signed as \`${result.origin}\` by \`${result.kid}\`\n`,
      );
      terminal.out.write(
        `  outcome: ${JSON.stringify(record["outcome"])}, grant: ${JSON.stringify(record["grant_id"])}, agent: ${JSON.stringify(record["agent_id"])}\n`,
      );
      for (const settlement of result.settlements) {
        terminal.out.write(
          `  settled: ${JSON.stringify(settlement["amount_minor"])} ${settlement["currency"] === null ? "" : String(settlement["currency"])} (\`${String(settlement["ledger_id"])}\`)\n`,
        );
      }
    } else {
      terminal.out.write(`${p.red("not verified")}: ${result.field === "" ? "the receipt" : `\`${result.field}\``}: ${result.message}\n`);
    }
    return result.ok ? EXIT.ok : EXIT.failed;
  },
};
