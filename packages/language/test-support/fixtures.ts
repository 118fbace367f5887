// Shared fixtures of the language's unit tests: compiling that must succeed.
import { compilePolicy, type CompiledPolicy } from "../src/policy.js";

/** Compiles `text`, throwing its diagnostics if it does not compile. */
export function compiled(text: string): CompiledPolicy {
  const result = compilePolicy(text);
  if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
  return result.policy;
}
