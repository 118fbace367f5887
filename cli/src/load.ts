// Reading and checking inputs: each family compiled, each `.policy` file checked by the language.
import { checkPolicyFile, compileFamily, type CompiledFamily, type FamilyDiagnostic, SourceText } from "@agent-authority/families";
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

/** The code of the diagnostic that stands for an exception while one file was read or checked. */
export const INTERNAL_ERROR_CODE = "internal-error";

/**
 * Checks one file as `checkFile` does, except that an exception while reading or checking it
 * (an I/O error, a defect of the checker) becomes that file's one `internal-error` diagnostic, so
 * a run over many files still checks and reports all the others (decision 0119).
 */
export function checkFileOrReport(input: InputFile): CheckedFile {
  try {
    return checkFile(input);
  } catch (error) {
    const source = new SourceText(input.path, "");
    const reason = error instanceof Error ? error.message : String(error);
    const diagnostic: FamilyDiagnostic = {
      code: INTERNAL_ERROR_CODE,
      severity: "error",
      file: input.path,
      range: source.range(0, 0),
      message: `internal error while checking this file: \`${reason.replace(/`/g, "'")}\``,
      help: "the other files were checked; report this error if the file is readable",
    };
    return { input, path: input.path, source, diagnostics: [diagnostic], family: undefined };
  }
}
