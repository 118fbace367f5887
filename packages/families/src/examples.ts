// Previewing a grant against sample actions, and running a family's examples, with the engine's decide.
import { type ChainLink, type Decision, type DecisionRequest, type DecisionState, decide } from "@agent-authority/engine";
import type { GrantTerms } from "@agent-authority/lattice";
import { exampleParameters } from "./compile.js";
import { instantiateFamily } from "./instantiate.js";
import type { GrantFamilyBody, Outcome, SampleAction } from "./schema.js";

/** When an action happens if it does not say: a Monday, at noon UTC. */
export const DEFAULT_ACTION_TIME = Date.parse("2026-01-05T12:00:00Z");
/** A previewed grant is issued this long before the action. */
export const PREVIEW_ISSUED_BEFORE_MS = 60_000;
const HOUR_MS = 3_600_000;
const PREVIEW_GRANT_ID = "grt_0000000000000000000000prev";
const PREVIEW_ENVIRONMENT = "preview";
const PREVIEW_ATTESTATION = { manifest_hash: "preview", content_hash: "preview", provenance_version: "preview" } as const;

type IssueBody = Readonly<Record<string, unknown>>;

/** The lattice terms of a grant issued from an issue body at `issuedAt`, with the API's defaults. */
export function grantTermsOf(grant: IssueBody, issuedAt: number): GrantTerms {
  const get = <T>(name: string, fallback: T): T => (grant[name] === undefined ? fallback : (grant[name] as T));
  const ttlHours = get<number>("ttl_hours", 24);
  return {
    scope: { tool: [...((grant["scope"] as { tool?: string[] } | undefined)?.tool ?? [])] },
    window: { start: issuedAt, end: issuedAt + ttlHours * HOUR_MS },
    budget_amount_minor: get<number>("budget_amount_minor", 0),
    budget_currency: get<string | null>("budget_currency", null),
    budget_count: get<number | null>("budget_count", null),
    conditions: { clean_context: (grant["conditions"] as { clean_context?: boolean } | undefined)?.clean_context ?? false },
    enforcement_mode: get<"observe" | "enforce">("enforcement_mode", "enforce"),
    audience: get<string | null>("audience", null),
    principal: { type: get<"human" | "team" | "service">("principal_type", "service"), id: get<string>("principal_id", "") },
    delegation_policy: get<"none" | "attenuating">("delegation_policy", "none"),
    delegation_depth_max: get<number | null>("delegation_depth_max", null),
    policy: get<string | null>("policy", null),
  };
}

export interface PreviewUsage {
  readonly uses?: number;
  readonly spent_minor?: number;
}

/**
 * What a grant would decide for one sample action, through the same `decide` the server runs.
 * The grant is active, issued a minute before the action, and held by its agent, whose
 * certificate is taken as valid; `approver` in the action stands for an approval by that human.
 */
export function previewAction(grant: IssueBody, action: SampleAction, usage: PreviewUsage = {}): Decision {
  const now = action.at !== undefined ? Date.parse(action.at) : DEFAULT_ACTION_TIME;
  const agent = String(grant["agent_id"]);
  const link: ChainLink = {
    grant_id: PREVIEW_GRANT_ID,
    agent_id: agent,
    status: "active",
    terms: grantTermsOf(grant, now - PREVIEW_ISSUED_BEFORE_MS),
    usage: { uses: usage.uses ?? 0, settled_minor: usage.spent_minor ?? 0, holds: [] },
  };
  const approver = action.approver ?? null;
  const request: DecisionRequest = {
    grant_id: PREVIEW_GRANT_ID,
    agent_id: agent,
    tool: action.tool,
    amount_minor: action.amount_minor ?? null,
    currency: action.currency ?? null,
    audience: action.audience ?? null,
    args: action.args ?? null,
    context: action.context ?? null,
    attestation: PREVIEW_ATTESTATION,
    approval:
      approver === null
        ? null
        : {
            approval_id: "apr_preview",
            approver,
            grant_id: PREVIEW_GRANT_ID,
            tool: action.tool,
            amount_ceiling_minor: action.amount_minor ?? 0,
            expires_at: now + HOUR_MS,
          },
  };
  const state: DecisionState = {
    environment: PREVIEW_ENVIRONMENT,
    certificate: {
      certificate_id: "crt_preview",
      agent_id: agent,
      environment: PREVIEW_ENVIRONMENT,
      revoked_at: null,
      ...PREVIEW_ATTESTATION,
    },
  };
  return decide(request, [link], state, now);
}

/** The outcome `enforce` gives: in `observe` the decision records it as `would_outcome`. */
export function enforcedOutcome(decision: Decision): Outcome {
  return decision.would_outcome ?? decision.outcome;
}

export interface ExampleResult {
  readonly index: number;
  readonly name: string;
  readonly expected: Outcome;
  /** Present when the example's parameters instantiated the family. */
  readonly decision: Decision | undefined;
  readonly passed: boolean;
  /** What differs from the expectation, one sentence each; empty when passed. */
  readonly mismatches: readonly string[];
}

const squash = (text: string): string => text.replace(/\s+/g, " ").trim();

/** Runs one example: instantiate with its parameters, decide its action, compare with `expect`, `gate` and `residual`. */
export function runExample(family: GrantFamilyBody, index: number): ExampleResult {
  const example = family.examples![index]!;
  const base = { index, name: example.name, expected: example.expect };
  const instance = instantiateFamily(family, exampleParameters(family, index));
  if (!instance.ok) {
    const problems = [...instance.parameterProblems.map((p) => p.message), ...instance.grantErrors.map((e) => `grant: ${e.message}`)];
    return { ...base, decision: undefined, passed: false, mismatches: problems.map((p) => `does not instantiate: ${p}`) };
  }
  const decision = previewAction(instance.value.grant, example.action, example.usage ?? {});
  const mismatches: string[] = [];
  const actual = enforcedOutcome(decision);
  if (actual !== example.expect) {
    mismatches.push(
      `expected \`${example.expect}\`, got \`${actual}\`${decision.decided_by !== null ? ` from the ${decision.decided_by} gate: ${decision.reason}` : ""}`,
    );
  }
  if (example.gate !== undefined && decision.decided_by !== example.gate) {
    mismatches.push(
      `expected the ${example.gate} gate to decide, but ${decision.decided_by === null ? "every gate passed" : `the ${decision.decided_by} gate decided`}`,
    );
  }
  if (example.residual !== undefined && squash(decision.residual ?? "") !== squash(example.residual)) {
    mismatches.push(
      `expected the residual \`${example.residual}\`, got ${decision.residual === undefined ? "none" : `\`${decision.residual}\``}`,
    );
  }
  return { ...base, decision, passed: mismatches.length === 0, mismatches };
}

export function runExamples(family: GrantFamilyBody): ExampleResult[] {
  return (family.examples ?? []).map((_example, index) => runExample(family, index));
}
