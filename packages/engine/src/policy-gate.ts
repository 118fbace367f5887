// Gate 8: the chain's policies, each evaluated against its own grant's usage, conjoined.

import { compilePolicy, conjoin, type CompiledPolicy, type CompileResult, type Diagnostic } from "@agent-authority/language";
import { policyEnvironment } from "./environment.js";
import { describeLink, requestAmount } from "./gates.js";
import { ENGINE_LIMITS } from "./limits.js";
import type { ReasonCode } from "./reasons.js";
import type { ChainLink, DecisionRequest, Outcome } from "./types.js";

export type PolicyVerdict =
  | { readonly ok: true; readonly code: ReasonCode; readonly reason: string; readonly approver: string | null }
  | {
      readonly ok: false;
      readonly outcome: Outcome;
      readonly code: ReasonCode;
      readonly reason: string;
      readonly grant_id?: string;
      readonly residual?: string;
      readonly policy_error?: Diagnostic;
    };

// Compiled policies by text: compiling is the costly step and policies repeat across decisions.
// The cache holds no state that changes a decision: the same text always compiles the same way.
const compiled = new Map<string, CompileResult>();

function compileCached(text: string, origin: "stored" | "residual" = "stored"): CompileResult {
  // A residual is keyed apart: it compiles under its own bound, not the policy text limit.
  const key = origin === "residual" ? `\u0000residual\u0000${text}` : text;
  const hit = compiled.get(key);
  if (hit !== undefined) return hit;
  const result = compilePolicy(text, { origin });
  if (compiled.size >= ENGINE_LIMITS.compiledPoliciesMax) compiled.delete(compiled.keys().next().value as string);
  compiled.set(key, result);
  return result;
}

/** A residual compiled as the gate reads it (decision 0131): under its own bound, never the 4 KiB one. */
function compileResidualCached(text: string): CompileResult {
  return compileCached(text, "residual");
}

function first(diagnostics: readonly Diagnostic[]): string {
  const d = diagnostics.find((x) => x.severity === "error") ?? diagnostics[0];
  return d === undefined ? "unknown error" : `${d.code}: ${d.message}`;
}

/** Checks that a presented approval covers this action; null when it does. */
function approvalProblem(request: DecisionRequest, now: number): PolicyVerdict | null {
  const approval = request.approval;
  if (approval == null) return null;
  const id = `\`${approval.approval_id}\``;
  if (approval.grant_id !== request.grant_id) {
    return { ok: false, outcome: "deny", code: "approval.wrong_grant", reason: `approval ${id} was given for grant \`${approval.grant_id}\`, not \`${request.grant_id}\`` };
  }
  if (approval.tool !== request.tool) {
    return { ok: false, outcome: "deny", code: "approval.wrong_tool", reason: `approval ${id} was given for tool \`${approval.tool}\`, not \`${request.tool}\`` };
  }
  if (requestAmount(request) > approval.amount_ceiling_minor) {
    return {
      ok: false,
      outcome: "deny",
      code: "approval.over_ceiling",
      reason: `the amount \`${requestAmount(request)}\` exceeds the ceiling \`${approval.amount_ceiling_minor}\` of approval ${id}`,
    };
  }
  if (approval.expires_at <= now) {
    return { ok: false, outcome: "deny", code: "approval.expired", reason: `approval ${id} has expired; retry without it to ask for a new approval` };
  }
  return null;
}

/** Gate 8. A link without a policy has the policy `true`. */
export function policyGate(request: DecisionRequest, chain: readonly ChainLink[], now: number): PolicyVerdict {
  const problem = approvalProblem(request, now);
  if (problem !== null) return problem;
  const approver = request.approval?.approver ?? null;
  const residuals: { policy: CompiledPolicy | null; text: string }[] = [];
  for (let i = 0; i < chain.length; i += 1) {
    const link = chain[i]!;
    if (link.terms.policy === null) continue;
    const result = compileCached(link.terms.policy);
    if (!result.ok) {
      return { ok: false, outcome: "deny", code: "policy.invalid", reason: `the policy of ${describeLink(chain, i)} does not compile (${first(result.diagnostics)}); it fails closed`, grant_id: link.grant_id };
    }
    const env = policyEnvironment(request, link, now);
    if (approver !== null) {
      const value = result.policy.evaluate({ ...env, approver });
      if (!value.ok) return runtimeError(chain, i, value.error);
      if (!value.value) {
        return { ok: false, outcome: "deny", code: "policy.deny", reason: `the policy of ${describeLink(chain, i)} refuses this action even with approver \`${approver}\``, grant_id: link.grant_id };
      }
      continue;
    }
    const outcome = result.policy.decide(env);
    if (outcome.outcome === "deny") {
      if (outcome.error !== undefined) return runtimeError(chain, i, outcome.error);
      return { ok: false, outcome: "deny", code: "policy.deny", reason: `the policy of ${describeLink(chain, i)} refuses this action`, grant_id: link.grant_id };
    }
    // The same residual twice (a child repeating its parent's policy) asks the approver once.
    if (outcome.outcome === "gated" && !residuals.some((r) => r.text === outcome.residual)) residuals.push(residualOf(outcome.residual));
  }
  if (approver !== null) return { ok: true, code: "policy.approved", reason: `every policy of the chain allows this action with approver \`${approver}\``, approver };
  if (residuals.length === 0) return { ok: true, code: "policy.allow", reason: "every policy of the chain allows this action", approver: null };
  return gatedVerdict(request, chain[chain.length - 1]!, residuals, now);
}

function residualOf(text: string): { policy: CompiledPolicy | null; text: string } {
  const result = compileResidualCached(text);
  return { policy: result.ok ? result.policy : null, text };
}

function runtimeError(chain: readonly ChainLink[], i: number, error: Diagnostic): PolicyVerdict {
  return {
    ok: false,
    outcome: "deny",
    code: "policy.error",
    reason: `the policy of ${describeLink(chain, i)} failed at run time and fails closed: ${error.message}`,
    grant_id: chain[i]!.grant_id,
    policy_error: error,
  };
}

/** Several links gated: one approver must satisfy every residual, so the residuals are conjoined. */
function gatedVerdict(request: DecisionRequest, leaf: ChainLink, residuals: readonly { policy: CompiledPolicy | null; text: string }[], now: number): PolicyVerdict {
  const gated = (residual: string): PolicyVerdict => ({
    ok: false,
    outcome: "gated",
    code: "policy.gated",
    reason: `this action needs a human's approval: an approver satisfying \`${residual}\``,
    residual,
  });
  if (residuals.length === 1) return gated(residuals[0]!.text);
  const policies = residuals.map((r) => r.policy);
  if (policies.some((p) => p === null)) return gated(residuals.map((r) => `(${r.text})`).join(" && "));
  const joint = conjoin(policies as CompiledPolicy[]).decide(policyEnvironment(request, leaf, now));
  if (joint.outcome === "gated") return gated(joint.residual);
  if (joint.outcome === "allow") return { ok: true, code: "policy.allow", reason: "every policy of the chain allows this action", approver: null };
  return {
    ok: false,
    outcome: "deny",
    code: "policy.no_single_approver",
    reason: `each policy of the chain can be approved, but no single approver satisfies ${residuals.map((r) => `\`${r.text}\``).join(" and ")}`,
  };
}

/** The names a residual is read with, but for `args`: it names no other (its values are stated in it). */
const RESIDUAL_ENVIRONMENT = Object.freeze({
  amount_minor: 0, currency: "", tool: "", approver: null, agent: "", principal: "", audience: "",
  uses: 0, spent_minor: 0, hour_utc: 0, weekday_utc: "mon" as const,
});

/**
 * Whether `approver` satisfies a gated decision's residual (its "who can approve") on that
 * decision's own action, exactly as the policy gate will judge the retry with their approval.
 *
 * INVARIANT (admission-is-the-retry): a residual states every name of the decision's environment
 * as its value but `args` and `approver` (residual.ts, INVARIANT (residual-size)), so reading it
 * with the decision's own `args` and the approver gives the retry's outcome; with any other `args`
 * (say none) a part that failed on the action may hold, and admit anyone (decision 0130). A
 * residual that does not compile or fails at run time admits nobody: it fails closed.
 */
export function residualAdmits(residual: string, approver: string, args: unknown): boolean {
  const result = compileResidualCached(residual);
  if (!result.ok) return false;
  const value = result.policy.evaluate({ ...RESIDUAL_ENVIRONMENT, args: argsObject(args), approver });
  return value.ok && value.value === true;
}

/** The decision's `args` as the gate read them: a JSON object, anything else is no arguments. */
function argsObject(args: unknown): Readonly<Record<string, unknown>> {
  return args !== null && typeof args === "object" && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
}
