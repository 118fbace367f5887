// chevrotain, loaded from the single-file build its package ships. The package's entry point is
// its sources as about 300 modules (lodash-es among them): loading them took 350 ms of every
// process that parses a policy (each `authority` command, the server, the language server), the
// single file of the same version 20 ms. The package's `exports` name only the entry point, so the
// file beside it is found from where that entry point resolves. Every runtime use of chevrotain in
// this repository goes through here (test/architecture.test.ts), so that one copy is loaded.
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

type Chevrotain = typeof import("chevrotain");

const entry = createRequire(import.meta.url).resolve("chevrotain");
const chevrotain = (await import(new URL("../chevrotain.mjs", pathToFileURL(entry)).href)) as Chevrotain;

export const { CstParser, EOF, Lexer, createToken, generateCstDts } = chevrotain;
