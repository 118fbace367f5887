// `authority preview --explain`: for a sample action the policy refused, the nearest input the policy allows.
import { DEFAULT_ACTION_TIME, type PreviewUsage, type SampleAction } from "@agent-authority/families";
import { type PolicyEnvironment, WEEKDAYS } from "@agent-authority/language";
import type { Decision } from "@agent-authority/engine";
import type { Explanation } from "@agent-authority/analysis";

/** The days as `Date.getUTCDay` numbers them, Sunday first. */
const BY_UTC_DAY = [WEEKDAYS[6]!, ...WEEKDAYS.slice(0, 6)];

/** The names the grant's policy saw for the action, as the engine builds them, with the action's approver (null without one). */
export function policyInputOf(grant: Readonly<Record<string, unknown>>, action: SampleAction, usage: PreviewUsage): PolicyEnvironment {
  const date = new Date(action.at !== undefined ? Date.parse(action.at) : DEFAULT_ACTION_TIME);
  return {
    amount_minor: action.amount_minor ?? 0,
    currency: action.currency ?? "",
    tool: action.tool,
    approver: action.approver ?? null,
    agent: String(grant["agent_id"] ?? ""),
    principal: String(grant["principal_id"] ?? ""),
    audience: action.audience ?? (typeof grant["audience"] === "string" ? grant["audience"] : ""),
    uses: usage.uses ?? 0,
    spent_minor: usage.spent_minor ?? 0,
    hour_utc: date.getUTCHours(),
    weekday_utc: BY_UTC_DAY[date.getUTCDay()]!,
    args: action.args ?? {},
  };
}

/** What `--explain` shows of one explanation, in JSON. */
export function explanationJson(e: Explanation): unknown {
  if (e.kind === "nearest") return { nearest: { input: e.input, changed: e.changed } };
  if (e.kind === "never") return { none: "the policy allows no input" };
  if (e.kind === "unknown") return { unknown: e.reason };
  return { none: "the policy allows these names; another gate refused" };
}

/** The explanations of the cases the policy gate refused (undefined for the others), with one solver for all. */
export async function explainRefusals(
  cases: readonly { grant: Readonly<Record<string, unknown>>; action: SampleAction; usage: PreviewUsage; decision: Decision }[],
): Promise<(Explanation | undefined)[]> {
  const refused = cases.map((c) => (c.decision.would_outcome ?? c.decision.outcome) !== "allow" && c.decision.decided_by === "policy");
  if (!refused.some(Boolean)) return cases.map(() => undefined);
  const analysis = await import("@agent-authority/analysis");
  const analyzer = await analysis.createAnalyzer();
  try {
    const out: (Explanation | undefined)[] = [];
    for (const [i, c] of cases.entries()) {
      const policy = c.grant["policy"];
      out.push(
        refused[i] && typeof policy === "string"
          ? await analysis.nearestAllowed(analyzer, policy, policyInputOf(c.grant, c.action, c.usage))
          : undefined,
      );
    }
    return out;
  } finally {
    await analyzer.close();
  }
}
