// The policy environment of one decision (docs/policy-language.md), built from the request, a link's usage and `now`.

import type { PolicyEnvironment } from "@agent-authority/language";
import { requestAmount } from "./gates.js";
import { spentMinor } from "./usage.js";
import type { ChainLink, DecisionRequest } from "./types.js";

const WEEKDAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"] as const;

/** The environment without `approver`, as the partial evaluation sees it. */
export type PartialEnvironment = Omit<PolicyEnvironment, "approver">;

/**
 * The names a policy of `link` sees. `uses` and `spent_minor` are the usage of the grant whose
 * policy is evaluated, so an ancestor's `spent_minor < 1000` bounds its whole subtree.
 *
 * INVARIANT (currency-spend, engine side): `currency` is the request's own, `""` when it names
 * none, and never a grant's budget currency. The lattice lets a child that may not spend name any
 * currency; were that currency visible here, such a child could pass a `currency == …` policy its
 * parent refuses.
 */
export function policyEnvironment(request: DecisionRequest, link: ChainLink, now: number): PartialEnvironment {
  const date = new Date(now);
  return {
    amount_minor: requestAmount(request),
    currency: request.currency ?? "",
    tool: request.tool,
    agent: request.agent_id,
    principal: link.terms.principal.id,
    audience: request.audience ?? link.terms.audience ?? "",
    uses: link.usage.uses,
    spent_minor: spentMinor(link, now),
    hour_utc: date.getUTCHours(),
    weekday_utc: WEEKDAYS[date.getUTCDay()]!,
    args: request.args ?? {},
  };
}
