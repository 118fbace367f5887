#!/usr/bin/env node
// Entry point of the `authority` command: the compiled CLI does the work.
import { main } from "../dist/main.js";

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`authority: internal error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 2;
  },
);
