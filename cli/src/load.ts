// Reading and checking inputs: each family compiled, each `.policy` file checked by the language.
import { checkPolicyFile, compileFamily, type CompiledFamily, SourceText } from "@agent-authority/families";
import { type InputFile, readText } from "./files.js";
import type { FileReport } from "./report.js";

export interface CheckedFile extends FileReport {
  readonly input: InputFile;
  /** The compiled family, for a family file. */
  readonly family: CompiledFamily | undefined;
}

export function checkFile(input: InputFile): CheckedFile {
  const text = readText(input);
  if (input.kind === "family") {
    const family = compileFamily(text, input.path);
    return { input, path: input.path, source: family.source, diagnostics: family.diagnostics, family };
  }
  const source = new SourceText(input.path, text);
  return { input, path: input.path, source, diagnostics: checkPolicyFile(source), family: undefined };
}
