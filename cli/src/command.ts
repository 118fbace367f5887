// The shape of a command: one module per command, listed in one table (commands/index.ts).
import type { Terminal } from "./terminal.js";

/** Exit codes: 0 success, 1 the checked input has errors or a test failed, 2 usage, unavailable or an internal error. */
export const EXIT = Object.freeze({ ok: 0, failed: 1, usage: 2, internal: 2 });

export interface Command {
  /** The words that name it, e.g. `lint` or `ledger verify`. */
  readonly name: string;
  readonly summary: string;
  /** The usage text shown by `authority <name> --help`. */
  readonly usage: string;
  /** False for a command listed in `--help` that this build does not provide yet. */
  readonly available: boolean;
  run(argv: readonly string[], terminal: Terminal): Promise<number>;
}

/** A command that is listed but not provided yet: it says so and exits 2. */
export function notYetAvailable(name: string, summary: string, reason: string): Command {
  return {
    name,
    summary,
    usage: `authority ${name}\n\n${summary}.\n\nNot yet available in this version: ${reason}.\n`,
    available: false,
    async run(_argv, terminal) {
      terminal.err.write(`authority ${name}: not yet available in this version: ${reason}\n`);
      return EXIT.usage;
    },
  };
}
