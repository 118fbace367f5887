// `authority ledger verify`: recompute every hash chain of the sealed decision ledger, reading the
// configured database with the server's own verifier, or asking a running server; with a saved
// checkpoint, check the database (or the server's newer tree) against it as a witness.
import { verifyCheckpoint, verifyConsistency, type CheckpointKey } from "@agent-authority/sdk";
import { option, parseArgs, type ParsedArgs, UsageError } from "../args.js";
import { type Command, EXIT } from "../command.js";
import { request, serverTarget } from "../server-client.js";
import { serverConfig } from "../optional-packages.js";
import { paint, type Terminal } from "../terminal.js";
import { readJson, SIGNATURE_VERIFY_LIMITS } from "./signature.js";

/** A checkpoint file is a signed note of a few hundred bytes; anything past this is refused unread. */
const CHECKPOINT_FILE_BYTES_MAX = 8_192;

interface CheckpointResult {
  readonly ok: boolean;
  readonly origin?: string;
  readonly size?: number;
  readonly kid?: string;
  /** Offline: the first position that differs. */
  readonly broken?: {
    readonly position: number;
    readonly through: number;
    readonly ledger_id: string | null;
    readonly problem: string;
  } | null;
  /** Against a server: the size of its current tree, which extends the checkpoint when `ok`. */
  readonly current_size?: number;
  /** Why the checkpoint itself, or the server's proof, was refused. */
  readonly refused?: string;
}

interface Verification {
  readonly ok: boolean;
  readonly trees: number;
  readonly records: number;
  readonly broken: {
    readonly tree_id: string;
    readonly seq: number;
    readonly ledger_id: string;
    readonly problem: string;
    readonly position?: number;
  } | null;
}

/** The database named by the server's configuration, opened read-only in spirit: nothing is written or created. */
async function withDatabase<T>(
  terminal: Terminal,
  work: (
    server: Awaited<ReturnType<typeof serverConfig>>["server"],
    store: ReturnType<Awaited<ReturnType<typeof serverConfig>>["server"]["openStore"]>,
  ) => Promise<T>,
): Promise<T> {
  const { server, config: settings } = await serverConfig("ledger verify", terminal);
  let store: ReturnType<typeof server.openStore>;
  try {
    store = server.openExistingStore(settings.databaseUrl, {
      ...(settings.databaseSchema !== undefined ? { schema: settings.databaseSchema } : {}),
      engine: settings.databaseEngine,
    });
  } catch (error) {
    if (!(error instanceof server.DatabaseNotFound)) throw error;
    throw new UsageError(
      `${error.message}: set AUTHORITY_DATA_DIR or AUTHORITY_DATABASE_URL to the server's database, or ask a running server with \`--server URL\``,
    );
  }
  try {
    return await work(server, store);
  } finally {
    await store.close();
  }
}

/** The database's chains, and the first N records of its log against the checkpoint when one is given. */
async function verifyDatabase(
  terminal: Terminal,
  note: string | undefined,
  keys: CheckpointKey[] | undefined,
): Promise<{ chains: Verification; checkpoint?: CheckpointResult }> {
  return withDatabase(terminal, async (server, store) => {
    const chains = await server.verifyLedger(store);
    if (note === undefined) return { chains };
    try {
      const checked = await server.verifyCheckpointAgainst(store, note, keys);
      return {
        chains,
        checkpoint: { ok: checked.ok, origin: checked.origin, size: checked.size, kid: checked.kid, broken: checked.broken },
      };
    } catch (error) {
      if (error instanceof server.CheckpointRefused) return { chains, checkpoint: { ok: false, refused: error.message } };
      throw error;
    }
  });
}

/** Against a running server: its current checkpoint, signed by a key given, and a proof that its tree extends the saved one. */
async function checkServer(
  target: ReturnType<typeof serverTarget>,
  note: string,
  keys: CheckpointKey[] | undefined,
): Promise<CheckpointResult | string> {
  let trusted = keys;
  if (trusted === undefined) {
    const jwks = await request(target, "GET", "/signing-keys");
    if (!jwks.ok) return jwks.message;
    trusted = (jwks.body as { keys?: CheckpointKey[] }).keys ?? [];
  }
  const saved = verifyCheckpoint(note, trusted);
  if (!saved.ok) return { ok: false, refused: `the saved checkpoint: ${saved.message}` };
  const answer = await request(target, "GET", "/ledger/checkpoint");
  if (!answer.ok) return answer.message;
  const current = verifyCheckpoint(String(answer.body), trusted, saved.origin);
  if (!current.ok) return { ok: false, origin: saved.origin, size: saved.size, refused: `the server's checkpoint: ${current.message}` };
  const result = { origin: saved.origin, size: saved.size, kid: saved.kid, current_size: current.size };
  if (current.size < saved.size)
    return {
      ok: false,
      ...result,
      refused: `the server's tree has ${current.size} records, fewer than the ${saved.size} of the saved checkpoint: the ledger was cut`,
    };
  const proof = await request(target, "GET", `/ledger/consistency?first=${saved.size}&second=${current.size}`);
  if (!proof.ok) return proof.message;
  const hashes = (((proof.body as { proof?: unknown }).proof as unknown[] | undefined) ?? []).map((h) => Buffer.from(String(h), "base64"));
  return verifyConsistency(saved.size, current.size, saved.root, current.root, hashes)
    ? { ok: true, ...result }
    : {
        ok: false,
        ...result,
        refused: `the server's tree of ${current.size} records does not extend the saved checkpoint of ${saved.size}: records it covered were changed, moved or deleted`,
      };
}

function printCheckpoint(terminal: Terminal, result: CheckpointResult): void {
  const p = paint(terminal.color);
  if (result.refused !== undefined) {
    terminal.out.write(`${p.red("checkpoint refused")}: ${result.refused}\n`);
  } else if (result.broken !== undefined && result.broken !== null) {
    const b = result.broken;
    const where = b.through === b.position ? `position ${b.position}` : `positions ${b.position} to ${b.through}`;
    terminal.out.write(`${p.red("checkpoint broken")}: ${where}${b.ledger_id === null ? "" : ` (\`${b.ledger_id}\`)`}: ${b.problem}\n`);
  } else if (result.current_size !== undefined) {
    terminal.out.write(
      `${p.green("consistent")}: the server's tree of ${result.current_size} records extends the checkpoint of ${result.size} (\`${result.origin}\`)\n`,
    );
  } else {
    terminal.out.write(
      `${p.green("checkpoint verified")}: the first ${result.size} records are those of the checkpoint (\`${result.origin}\`, key \`${result.kid}\`)\n`,
    );
  }
}

export const ledgerVerifyCommand: Command = {
  name: "ledger verify",
  summary: "check every hash chain of the sealed decision ledger",
  usage: `authority ledger verify [--server URL] [--key KEY] [--checkpoint FILE [--keys JWKS]] [--format text|json]

Recomputes the hash of every sealed record, chain by chain, and reports the first broken link: a
record changed after sealing, a missing record, a column that differs from what was sealed.

Without --server it reads the configured database directly (AUTHORITY_DATA_DIR,
AUTHORITY_DATABASE_URL, as for \`authority migrate\`) and writes nothing; a SQLite database that
does not exist is an error (exit 2), never created. With --server it asks a
running server (GET /v1/ledger/verify) with an auditor or admin key (--key or AUTHORITY_KEY).

  --checkpoint FILE  a checkpoint saved earlier (GET /v1/ledger/checkpoint), as a witness keeps
                     it. Offline, the first N records of the database's log are hashed again and
                     their Merkle tree compared with the checkpoint's root: a record deleted,
                     rewritten or moved, or a log cut short, is reported with its position. With
                     --server, the server's current checkpoint must prove that its tree extends
                     the saved one (GET /v1/ledger/consistency).
  --keys JWKS        the server's public keys the checkpoint must be signed by (a witness's own
                     copy of GET /v1/signing-keys); without it, the keys the database or the
                     server lists are trusted

Exit status: 0 every chain (and the checkpoint) verifies, 1 a chain is broken, the checkpoint does
not hold or the ledger could not be read, 2 usage error.
`,
  available: true,
  async run(argv, terminal) {
    const args = parseArgs(argv, { server: "string", key: "string", format: "string", checkpoint: "string", keys: "string" });
    if (args.positionals.length > 0) throw new UsageError("`ledger verify` takes no arguments");
    const format = option(args, "format") ?? "text";
    if (format !== "text" && format !== "json") throw new UsageError("`--format` is `text` or `json`");
    const { note, keys } = checkpointInputs(args, terminal.cwd);
    const verified =
      option(args, "server") !== undefined ? await verifyOnServer(args, terminal, note, keys) : await verifyHere(terminal, note, keys);
    if (typeof verified === "string") {
      terminal.err.write(`authority ledger verify: ${verified}\n`);
      return EXIT.failed;
    }
    const { chains: result, checkpoint } = verified;
    if (format === "json")
      terminal.out.write(`${JSON.stringify(checkpoint === undefined ? result : { ...result, checkpoint }, null, 2)}\n`);
    else printVerification(terminal, result, checkpoint);
    return result.ok && (checkpoint === undefined || checkpoint.ok) ? EXIT.ok : EXIT.failed;
  },
};

/** The checkpoint to check (`--checkpoint`) and the JWKS to check it with (`--keys`), both optional. */
function checkpointInputs(args: ParsedArgs, cwd: string): { note: string | undefined; keys: CheckpointKey[] | undefined } {
  const checkpointPath = option(args, "checkpoint");
  const keysPath = option(args, "keys");
  if (keysPath !== undefined && checkpointPath === undefined)
    throw new UsageError("`--keys` checks a checkpoint: give it with `--checkpoint FILE`");
  const note =
    checkpointPath === undefined ? undefined : (readJson(cwd, checkpointPath, CHECKPOINT_FILE_BYTES_MAX, "checkpoint", false) as string);
  const keysFile = keysPath === undefined ? undefined : readJson(cwd, keysPath, SIGNATURE_VERIFY_LIMITS.keysBytesMax, "key set");
  if (keysFile !== undefined && !Array.isArray((keysFile as { keys?: unknown } | null)?.keys))
    throw new UsageError(`${keysPath}: the key set is a JWKS, an object with \`keys\``);
  return { note, keys: keysFile === undefined ? undefined : (keysFile as { keys: CheckpointKey[] }).keys };
}

type Verified = { chains: Verification; checkpoint?: CheckpointResult | undefined };

/** Asks the server to verify its chains, and checks the checkpoint against it; a string says why it could not. */
async function verifyOnServer(
  args: ParsedArgs,
  terminal: Terminal,
  note: string | undefined,
  keys: CheckpointKey[] | undefined,
): Promise<Verified | string> {
  const target = serverTarget(args, terminal.env, true);
  const answer = await request(target, "GET", "/ledger/verify");
  if (!answer.ok) return answer.message;
  if (note === undefined) return { chains: answer.body as Verification, checkpoint: undefined };
  const checked = await checkServer(target, note, keys);
  return typeof checked === "string" ? checked : { chains: answer.body as Verification, checkpoint: checked };
}

/** Verifies the configured database directly; a string says why the ledger could not be read. */
async function verifyHere(terminal: Terminal, note: string | undefined, keys: CheckpointKey[] | undefined): Promise<Verified | string> {
  try {
    return await verifyDatabase(terminal, note, keys);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    return `the ledger could not be read: ${error instanceof Error ? error.message : String(error)}`;
  }
}

function printVerification(terminal: Terminal, result: Verification, checkpoint: CheckpointResult | undefined): void {
  const p = paint(terminal.color);
  if (result.broken === null) terminal.out.write(`${p.green("verified")}: ${result.records} records in ${result.trees} chains\n`);
  else {
    const b = result.broken;
    if (b.position !== undefined)
      terminal.out.write(`${p.red("broken")}: position ${b.position} of the Merkle log (\`${b.ledger_id}\`): ${b.problem}\n`);
    else terminal.out.write(`${p.red("broken")}: chain \`${b.tree_id}\`, record ${b.seq} (\`${b.ledger_id}\`): ${b.problem}\n`);
    terminal.out.write(`checked ${result.records} records in ${result.trees} chains up to the break\n`);
  }
  if (checkpoint !== undefined) printCheckpoint(terminal, checkpoint);
}
