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
 * The names a policy of `link` sees, each computed from the request, the link and `now` when a
 * policy reads it: this class is the one definition of every name, and a name no policy reads
 * costs nothing (decision 0152). `approver` is the one who approved the action, or null when no
 * approval is presented (partial evaluation then reads it as unknown). `uses` and `spent_minor`
 * are the usage of the grant whose policy is evaluated, so an ancestor's `spent_minor < 1000`
 * bounds its whole subtree.
 *
 * INVARIANT (currency-spend, engine side): `currency` is the request's own, `""` when it names
 * none, and never a grant's budget currency. The lattice lets a child that may not spend name any
 * currency; were that currency visible here, such a child could pass a `currency == …` policy its
 * parent refuses.
 *
 * INVARIANT (read-while-deciding): a name is read from the request and the link as they are when
 * it is read, so an environment is read only while its decision is made, when neither changes (the
 * policy gate's own environments never leave it). `spent_minor`, which walks the holds, and
 * `args`, an object a policy may read many times, are kept once read. The names are getters, not
 * own properties: code that lists an environment's names takes them from the language's
 * ENVIRONMENT_NAMES, never from the object; `policyEnvironment` gives them as a plain object.
 */
export class LinkEnvironment implements PolicyEnvironment {
  readonly approver: string | null;
  readonly #request: DecisionRequest;
  readonly #link: ChainLink;
  readonly #now: number;
  #spent = -1;
  #args: Readonly<Record<string, unknown>> | null = null;

  constructor(request: DecisionRequest, link: ChainLink, now: number, approver: string | null = null) {
    this.approver = approver;
    this.#request = request;
    this.#link = link;
    this.#now = now;
  }

  get amount_minor(): number {
    return requestAmount(this.#request);
  }

  get currency(): string {
    return this.#request.currency ?? "";
  }

  get tool(): string {
    return this.#request.tool;
  }

  get agent(): string {
    return this.#request.agent_id;
  }

  get principal(): string {
    return this.#link.terms.principal.id;
  }

  get audience(): string {
    return this.#request.audience ?? this.#link.terms.audience ?? "";
  }

  get uses(): number {
    return this.#link.usage.uses;
  }

  get spent_minor(): number {
    // -1 is "not yet read"; a negative sum (never one of valid usage) is computed again, the same.
    if (this.#spent < 0) this.#spent = spentMinor(this.#link, this.#now);
    return this.#spent;
  }

  // The hour and weekday in UTC by arithmetic on epoch milliseconds (UTC has no leap seconds in
  // them), rather than a Date built per decision: what `getUTCHours` and `getUTCDay` answer.
  get hour_utc(): number {
    const days = Math.floor(this.#now / DAY_MS);
    return Math.floor((this.#now - days * DAY_MS) / HOUR_MS);
  }

  get weekday_utc(): (typeof WEEKDAYS)[number] {
    // 1 January 1970 was a Thursday: day 0 is `thu`, the fourth after `sun`.
    return WEEKDAYS[(((Math.floor(this.#now / DAY_MS) + 4) % 7) + 7) % 7]!;
  }

  get args(): Readonly<Record<string, unknown>> {
    if (this.#args === null) this.#args = this.#request.args ?? {};
    return this.#args;
  }
}

/** Every name of `link`'s environment (LinkEnvironment) as a plain object, for code that keeps or lists them. */
export function policyEnvironment(
  request: DecisionRequest,
  link: ChainLink,
  now: number,
  approver: string | null = null,
): PolicyEnvironment {
  const env = new LinkEnvironment(request, link, now, approver);
  return {
    amount_minor: env.amount_minor,
    currency: env.currency,
    tool: env.tool,
    approver: env.approver,
    agent: env.agent,
    principal: env.principal,
    audience: env.audience,
    uses: env.uses,
    spent_minor: env.spent_minor,
    hour_utc: env.hour_utc,
    weekday_utc: env.weekday_utc,
    args: env.args,
  };
}
