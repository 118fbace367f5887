// Policy checks on issue and delegate: the language package compiles the text; a policy that does
// not compile is refused with its diagnostics and spans.

import type { Diagnostic } from "@agent-authority/language";
import { compilePolicy } from "@agent-authority/language";
import { Refusal } from "../common/index.js";

/** Answers the lint warnings of a policy that compiles; throws `invalid_policy` otherwise. */
export function checkPolicy(text: string | undefined): readonly Diagnostic[] {
  if (text === undefined) return [];
  const result = compilePolicy(text);
  if (result.ok) return result.warnings;
  const first = result.diagnostics[0];
  throw new Refusal("invalid_policy", first === undefined ? undefined : first.message, { diagnostics: result.diagnostics });
}
