// The table of commands. To add one: write `commands/<name>.ts` exporting a `Command`, list it here.
import type { Command } from "../command.js";
import { compileCommand } from "./compile.js";
import { diffCommand } from "./diff.js";
import { fmtCommand } from "./fmt.js";
import { gatewayCommand } from "./gateway.js";
import { impactCommand } from "./impact.js";
import { lintCommand } from "./lint.js";
import { lspCommand } from "./lsp.js";
import { evalCommand } from "./eval.js";
import { parseCommand } from "./parse.js";
import { versionCommand } from "./version.js";
import { previewCommand } from "./preview.js";
import { pushCommand } from "./push.js";
import { keysCreateCommand, keysListCommand, keysRevokeCommand } from "./keys.js";
import { ledgerVerifyCommand } from "./ledger.js";
import { signingKeysListCommand, signingKeysRotateCommand } from "./signing-keys.js";
import { signatureVerifyCommand } from "./signature.js";
import { receiptVerifyCommand } from "./receipt.js";
import { manifestCommand } from "./manifest.js";
import { migrateCommand, serveCommand } from "./serve.js";
import { testCommand } from "./test.js";

export const COMMANDS: readonly Command[] = [
  lintCommand,
  fmtCommand,
  compileCommand,
  previewCommand,
  diffCommand,
  testCommand,
  pushCommand,
  impactCommand,
  keysCreateCommand,
  keysListCommand,
  keysRevokeCommand,
  signingKeysListCommand,
  signingKeysRotateCommand,
  signatureVerifyCommand,
  receiptVerifyCommand,
  migrateCommand,
  serveCommand,
  manifestCommand,
  ledgerVerifyCommand,
  gatewayCommand,
  lspCommand,
  evalCommand,
  parseCommand,
  versionCommand,
];

/** The command named by the leading words of `argv` (the longest match), and the remaining arguments. */
export function findCommand(argv: readonly string[]): { command: Command; rest: readonly string[] } | undefined {
  let best: { command: Command; rest: readonly string[] } | undefined;
  for (const command of COMMANDS) {
    const words = command.name.split(" ");
    if (words.every((word, i) => argv[i] === word) && (best === undefined || words.length > best.command.name.split(" ").length)) {
      best = { command, rest: argv.slice(words.length) };
    }
  }
  return best;
}

/** Commands whose first word is `word` (for `authority keys` alone). */
export function commandsUnder(word: string): Command[] {
  return COMMANDS.filter((c) => c.name.split(" ")[0] === word);
}
