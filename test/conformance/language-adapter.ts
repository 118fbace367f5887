// The adapter interface the language conformance vectors run through: the library implements it
// here, and the command line can implement it too and run the very same vectors.
import { compilePolicy, conjoin, formatPolicy, type CompiledPolicy, type PolicyEnvironment } from "@agent-authority/language";

/** What a vector compares of a diagnostic: its code and span, never its message. */
export interface ObservedDiagnostic {
  readonly code: string;
  readonly span: readonly [number, number];
}

export type ObservedCompile = { readonly ok: true; readonly warnings: readonly ObservedDiagnostic[] } | { readonly ok: false; readonly errors: readonly ObservedDiagnostic[] };
export type ObservedEvaluation = { readonly value: boolean } | { readonly error: ObservedDiagnostic };
export interface ObservedDecision {
  readonly outcome: "allow" | "deny" | "gated";
  readonly residual?: string;
  readonly error?: ObservedDiagnostic;
}
export type ObservedFormat = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly errors: readonly ObservedDiagnostic[] };

export interface LanguageAdapter {
  readonly name: string;
  compile(policy: string): Promise<ObservedCompile>;
  /** Evaluates with every name bound (`approver` included, possibly null). Only called on policies that compile. */
  evaluate(policy: string, env: PolicyEnvironment): Promise<ObservedEvaluation>;
  /** Decides with `approver` unknown; `chain` holds several policies to be conjoined (root first). */
  decide(chain: readonly string[], env: Omit<PolicyEnvironment, "approver">): Promise<ObservedDecision>;
  format(policy: string): Promise<ObservedFormat>;
}

function observe(d: { code: string; span: { start: number; end: number } }): ObservedDiagnostic {
  return { code: d.code, span: [d.span.start, d.span.end] };
}

function compiled(policy: string): CompiledPolicy {
  const result = compilePolicy(policy);
  if (!result.ok) throw new Error(`vector policy does not compile: ${policy}`);
  return result.policy;
}

/** The library itself, in process. */
export const libraryAdapter: LanguageAdapter = {
  name: "library",
  async compile(policy) {
    const result = compilePolicy(policy);
    return result.ok ? { ok: true, warnings: result.warnings.map(observe) } : { ok: false, errors: result.diagnostics.map(observe) };
  },
  async evaluate(policy, env) {
    const result = compiled(policy).evaluate(env);
    return result.ok ? { value: result.value } : { error: observe(result.error) };
  },
  async decide(chain, env) {
    const policy = chain.length === 1 ? compiled(chain[0]!) : conjoin(chain.map(compiled));
    const d = policy.decide(env);
    if (d.outcome === "gated") return { outcome: "gated", residual: d.residual };
    if (d.outcome === "deny" && d.error !== undefined) return { outcome: "deny", error: observe(d.error) };
    return { outcome: d.outcome };
  },
  async format(policy) {
    const result = formatPolicy(policy);
    return result.ok ? { ok: true, text: result.text } : { ok: false, errors: result.diagnostics.map(observe) };
  },
};
