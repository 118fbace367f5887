// The policy environment of one decision (docs/policy-language.md), built from the request, a link's usage and `now`.

import type { PolicyEnvironment } from "@agent-authority/language";
import { requestAmount } from "./gates.js";
import { spentMinor } from "./usage.js";
import type { ChainLink, DecisionRequest } from "./types.js";

const WEEKDAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"] as const;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** The environment without `approver`, as the partial evaluation sees it. */
export type PartialEnvironment = Omit<PolicyEnvironment, "approver">;

/**
 * The names a policy of `link` sees, `approver` the one who approved the action, or null when no
 * approval is presented (partial evaluation then reads it as unknown). It is bound here, in the one
 * object literal, rather than added by spreading a copy: every environment has the same shape, and
 * the gate builds one object per link. `uses` and `spent_minor` are the usage of the grant whose
 * policy is evaluated, so an ancestor's `spent_minor < 1000` bounds its whole subtree.
 *
 * INVARIANT (currency-spend, engine side): `currency` is the request's own, `""` when it names
 * none, and never a grant's budget currency. The lattice lets a child that may not spend name any
 * currency; were that currency visible here, such a child could pass a `currency == …` policy its
 * parent refuses.
 */
export function policyEnvironment(
  request: DecisionRequest,
  link: ChainLink,
  now: number,
  approver: string | null = null,
): PolicyEnvironment {
  // The hour and weekday in UTC by arithmetic on epoch milliseconds (UTC has no leap seconds in
  // them), rather than a Date built per decision: what `getUTCHours` and `getUTCDay` answer.
  const days = Math.floor(now / DAY_MS);
  return {
    amount_minor: requestAmount(request),
    currency: request.currency ?? "",
    tool: request.tool,
    approver,
    agent: request.agent_id,
    principal: link.terms.principal.id,
    audience: request.audience ?? link.terms.audience ?? "",
    uses: link.usage.uses,
    spent_minor: spentMinor(link, now),
    hour_utc: Math.floor((now - days * DAY_MS) / HOUR_MS),
    // 1 January 1970 was a Thursday: day 0 is `thu`, the fourth after `sun`.
    weekday_utc: WEEKDAYS[(((days + 4) % 7) + 7) % 7]!,
    args: request.args ?? {},
  };
}
