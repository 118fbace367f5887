// Gate 8: the chain's policies, each evaluated against its own grant's usage, conjoined.

import {
  costMeter,
  decideChain,
  decideLink,
  LIMITS,
  type ChainLinkPolicy,
  type ChainOutcome,
  type CompileResult,
  type Diagnostic,
  type EvaluationResult,
} from "@agent-authority/language";
import { type Compiled, type CompiledOrigin, CompiledPolicies } from "./compiled-policies.js";
import { LinkEnvironment } from "./environment.js";
import { describeLink, requestAmount } from "./gates.js";
import { ENGINE_LIMITS } from "./limits.js";
import { approvedVerdict, PolicyVerdicts } from "./policy-verdicts.js";
import type { ChainLink, DecisionRequest } from "./types.js";
import { fail, pass, type Verdict } from "./verdict.js";

// Compiled policies by text (compiled-policies.ts). The cache holds no state that changes a
// decision: the same text always compiles the same way, and a verdict kept is the one the same
// quotes would build.
const compiled = new CompiledPolicies(ENGINE_LIMITS.compiledPoliciesMax);

function compileCached(text: string, origin: CompiledOrigin = "stored"): Compiled {
  return compiled.get(text, origin);
}

/** A residual compiled as the gate reads it (decision 0131): under its own bound, never the 4 KiB one. */
function compileResidualCached(text: string): CompileResult {
  return compileCached(text, "residual").result;
}

function first(diagnostics: readonly Diagnostic[]): string {
  const d = diagnostics.find((x) => x.severity === "error") ?? diagnostics[0];
  return d === undefined ? "unknown error" : `${d.code}: ${d.message}`;
}

/** Checks that a presented approval covers this action; null when it does. */
function approvalProblem(request: DecisionRequest, now: number): Verdict | null {
  const approval = request.approval;
  if (approval == null) return null;
  if (approval.grant_id !== request.grant_id) {
    return fail(
      "deny",
      "approval.wrong_grant",
      `approval ${quoted(approval.approval_id)} was given for grant \`${approval.grant_id}\`, not \`${request.grant_id}\``,
    );
  }
  if (approval.tool !== request.tool) {
    return fail(
      "deny",
      "approval.wrong_tool",
      `approval ${quoted(approval.approval_id)} was given for tool \`${approval.tool}\`, not \`${request.tool}\``,
    );
  }
  if (requestAmount(request) > approval.amount_ceiling_minor) {
    return fail(
      "deny",
      "approval.over_ceiling",
      `the amount \`${requestAmount(request)}\` exceeds the ceiling \`${approval.amount_ceiling_minor}\` of approval ${quoted(approval.approval_id)}`,
    );
  }
  if (approval.expires_at <= now) {
    return fail(
      "deny",
      "approval.expired",
      `approval ${quoted(approval.approval_id)} has expired; retry without it to ask for a new approval`,
    );
  }
  return null;
}

/** A name in backticks, as a reason quotes it (made only when a reason is). */
function quoted(name: string): string {
  return `\`${name}\``;
}

/** Gate 8. A link without a policy has the policy `true`. */
export function policyGate(request: DecisionRequest, chain: readonly ChainLink[], now: number): Verdict {
  const problem = approvalProblem(request, now);
  if (problem !== null) return problem;
  const approver = request.approval?.approver ?? null;
  const only = onlyPolicy(chain);
  if (only >= 0) return singleLink(request, chain, only, now, approver);
  return approver === null ? unknownApprover(request, chain, now) : withApprover(request, chain, now, approver);
}

/** The chain's policies with `approver` unknown (no approval presented), decided as one conjunction. */
function unknownApprover(request: DecisionRequest, chain: readonly ChainLink[], now: number): Verdict {
  // One budget of work units for the whole chain and its conjunction (docs/policy-language.md, "Cost").
  const budget = costMeter(LIMITS.decisionUnitsMax);
  const links: ChainLinkPolicy[] = [];
  const positions: number[] = [];
  let invalid: Verdict | undefined;
  for (let i = 0; i < chain.length; i += 1) {
    const link = chain[i]!;
    if (link.terms.policy === null) continue;
    const result = compileCached(link.terms.policy).result;
    if (!result.ok) {
      invalid = invalidPolicy(chain, i, result.diagnostics);
      break;
    }
    links.push({ policy: result.policy, env: new LinkEnvironment(request, link, now, null) });
    positions.push(i);
  }
  // The links before one that does not compile still decide first: a refusal among them stands.
  return chainVerdict(chain, decideChain(links, budget), positions, invalid, new PolicyVerdicts());
}

/** The chain's policies with the approval's approver bound: each evaluated in turn, the first refusal denies. */
function withApprover(request: DecisionRequest, chain: readonly ChainLink[], now: number, approver: string): Verdict {
  const budget = costMeter(LIMITS.decisionUnitsMax);
  for (let i = 0; i < chain.length; i += 1) {
    const link = chain[i]!;
    if (link.terms.policy === null) continue;
    const result = compileCached(link.terms.policy).result;
    if (!result.ok) return invalidPolicy(chain, i, result.diagnostics);
    const value = result.policy.evaluate(new LinkEnvironment(request, link, now, approver), budget);
    const refusal = approvedLink(chain, i, value, approver, new PolicyVerdicts());
    if (refusal !== null) return refusal;
  }
  return approvedVerdict(approver);
}

/** The index of the chain's one link with a policy, or -1 when none or several have one. */
function onlyPolicy(chain: readonly ChainLink[]): number {
  let only = -1;
  for (let i = 0; i < chain.length; i += 1) {
    if (chain[i]!.terms.policy === null) continue;
    if (only >= 0) return -1;
    only = i;
  }
  return only;
}

/**
 * The policy gate when one link of the chain has a policy (the common case), with the verdict the
 * whole chain's path would give. With no approval, that policy is decided by its partial evaluation
 * directly (language `decideLink`); with one, it is evaluated once with the approver bound. Either
 * way one policy's own budget (LIMITS.evaluationUnitsMax) lies within the decision's, so it needs no
 * shared meter: the same charge, the same limit and the same `cost-exceeded`.
 */
function singleLink(request: DecisionRequest, chain: readonly ChainLink[], i: number, now: number, approver: string | null): Verdict {
  const link = chain[i]!;
  const { result, verdicts } = compileCached(link.terms.policy!);
  if (!result.ok) return invalidPolicy(chain, i, result.diagnostics);
  const env = new LinkEnvironment(request, link, now, approver);
  if (approver === null) return chainVerdict(chain, decideLink(result.policy, env), i, undefined, verdicts);
  return approvedLink(chain, i, result.policy.evaluate(env), approver, verdicts) ?? verdicts.approved(approver);
}

/** The refusal of link `i`'s policy evaluated with `approver` bound, or null when it allows. */
function approvedLink(
  chain: readonly ChainLink[],
  i: number,
  value: EvaluationResult,
  approver: string,
  verdicts: PolicyVerdicts,
): Verdict | null {
  if (!value.ok) return runtimeError(chain, i, value.error);
  return value.value ? null : verdicts.refusedWith(chain, i, approver);
}

function invalidPolicy(chain: readonly ChainLink[], i: number, diagnostics: readonly Diagnostic[]): Verdict {
  return fail(
    "deny",
    "policy.invalid",
    `the policy of ${describeLink(chain, i)} does not compile (${first(diagnostics)}); it fails closed`,
    {
      grant_id: chain[i]!.grant_id,
    },
  );
}

/** The verdict of the chain's links decided with `approver` unknown (language `decideChain`). */
function chainVerdict(
  chain: readonly ChainLink[],
  outcome: ChainOutcome,
  positions: readonly number[] | number,
  invalid: Verdict | undefined,
  verdicts: PolicyVerdicts,
): Verdict {
  switch (outcome.outcome) {
    case "deny": {
      const i = chainIndex(positions, outcome.link);
      if (outcome.error !== undefined) return runtimeError(chain, i, outcome.error);
      return verdicts.refused(chain, i);
    }
    case "cost-exceeded":
      return costExceeded(outcome.error, outcome.link === null ? undefined : chain[chainIndex(positions, outcome.link)]!.grant_id);
    default:
      if (invalid !== undefined) return invalid;
  }
  switch (outcome.outcome) {
    case "allow":
      return ALLOWED;
    case "gated":
      return verdicts.gated(outcome.residual);
    default:
      return fail(
        "deny",
        "policy.no_single_approver",
        `each policy of the chain can be approved, but no single approver satisfies ${outcome.residuals.map((r) => `\`${r}\``).join(" and ")}`,
      );
  }
}

/** The chain's index of the deciding link: by `positions`, or the one link with a policy. */
function chainIndex(positions: readonly number[] | number, link: number): number {
  return typeof positions === "number" ? positions : positions[link]!;
}

const ALLOWED: Verdict = Object.freeze(pass("policy.allow", "every policy of the chain allows this action", null));

function runtimeError(chain: readonly ChainLink[], i: number, error: Diagnostic): Verdict {
  if (error.code === "cost-exceeded") return costExceeded(error, chain[i]!.grant_id);
  return fail("deny", "policy.error", `the policy of ${describeLink(chain, i)} failed at run time and fails closed: ${error.message}`, {
    grant_id: chain[i]!.grant_id,
    policy_error: error,
  });
}

/** The decision's budget of work units ran out: it denies, whatever the policies would have said. */
function costExceeded(error: Diagnostic, grantId?: string): Verdict {
  const reason = `deciding the chain's policies on this action takes more than the ${LIMITS.decisionUnitsMax} work units one decision may use; it fails closed`;
  return fail("deny", "policy.cost_exceeded", reason, { grant_id: grantId, policy_error: error });
}

/** The names a residual is read with, but for `args`: it names no other (its values are stated in it). */
const RESIDUAL_ENVIRONMENT = Object.freeze({
  amount_minor: 0,
  currency: "",
  tool: "",
  approver: null,
  agent: "",
  principal: "",
  audience: "",
  uses: 0,
  spent_minor: 0,
  hour_utc: 0,
  weekday_utc: "mon" as const,
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
