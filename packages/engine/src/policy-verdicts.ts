// The policy gate's verdicts that quote something (a grant, an approver, a residual), each kept by
// its policy's cache entry with what it quotes and given again while that stays the same.

import { describeLink } from "./gates.js";
import type { ChainLink } from "./types.js";
import { fail, pass, type Verdict } from "./verdict.js";

/** How many verdicts of one kind, for one deciding link, a slot keeps by what else they quote. */
const QUOTES_KEPT = 16;

/**
 * One kind of verdict: those made for the deciding link last quoted (its grant, and whether it is
 * the leaf), by the one more string each quotes (an approver, a residual), up to QUOTES_KEPT of
 * them; the last one is compared first, without a lookup. A verdict for another link, or one more
 * string past the bound, forgets the others.
 *
 * INVARIANT (verdicts-read-only): a verdict is written only where it is made (verdict.ts); the
 * policy gate returns it to `decide`, which copies the fields it reads into the decision. So one
 * verdict may be given to many decisions. It is not frozen: freezing costs more than building it.
 */
class Slot {
  private grant: string | undefined;
  private leaf = false;
  private quoted = "";
  private verdict: Verdict | undefined;
  private readonly byQuote = new Map<string, Verdict>();

  /** A verdict made before with these quotes, if kept. */
  kept(grant: string, leaf: boolean, quoted: string): Verdict | undefined {
    if (this.grant !== grant || this.leaf !== leaf) return undefined;
    return this.quoted === quoted ? this.verdict : this.byQuote.get(quoted);
  }

  keep(grant: string, leaf: boolean, quoted: string, verdict: Verdict): Verdict {
    if (this.grant !== grant || this.leaf !== leaf || this.byQuote.size >= QUOTES_KEPT) this.byQuote.clear();
    this.grant = grant;
    this.leaf = leaf;
    this.quoted = quoted;
    this.verdict = verdict;
    this.byQuote.set(quoted, verdict);
    return verdict;
  }
}

/**
 * The verdicts last made from one policy, of each kind, each given again while what its reason
 * quotes is one kept: a policy mostly refuses and gates for one grant at a time, with one
 * residual and a few approvers, and a reason costs more to build than the policy takes to decide
 * (decisions 0150, 0151). A verdict is a function of what it quotes, so the one kept equals, field
 * for field, the one that would be built; one whose quotes are new costs a lookup and a few writes
 * more than before.
 */
export class PolicyVerdicts {
  private readonly refusal = new Slot();
  private readonly approvedRefusal = new Slot();
  private readonly approval = new Slot();
  private readonly gate = new Slot();

  /** Link `i`'s policy refuses the action whoever approves it. */
  refused(chain: readonly ChainLink[], i: number): Verdict {
    const grant = chain[i]!.grant_id;
    const leaf = i === chain.length - 1;
    return this.refusal.kept(grant, leaf, "") ?? this.refusal.keep(grant, leaf, "", refusedVerdict(chain, i));
  }

  /** Link `i`'s policy refuses the action with `approver`'s approval too. */
  refusedWith(chain: readonly ChainLink[], i: number, approver: string): Verdict {
    const grant = chain[i]!.grant_id;
    const leaf = i === chain.length - 1;
    const slot = this.approvedRefusal;
    return slot.kept(grant, leaf, approver) ?? slot.keep(grant, leaf, approver, refusedWithVerdict(chain, i, approver));
  }

  /** Every policy of the chain allows the action with `approver`'s approval. */
  approved(approver: string): Verdict {
    return this.approval.kept("", true, approver) ?? this.approval.keep("", true, approver, approvedVerdict(approver));
  }

  /** The action needs an approver satisfying `residual`. */
  gated(residual: string): Verdict {
    return this.gate.kept("", true, residual) ?? this.gate.keep("", true, residual, gatedVerdict(residual));
  }
}

function refusedVerdict(chain: readonly ChainLink[], i: number): Verdict {
  return fail("deny", "policy.deny", `the policy of ${describeLink(chain, i)} refuses this action`, { grant_id: chain[i]!.grant_id });
}

function refusedWithVerdict(chain: readonly ChainLink[], i: number, approver: string): Verdict {
  const reason = `the policy of ${describeLink(chain, i)} refuses this action even with approver \`${approver}\``;
  return fail("deny", "policy.deny", reason, { grant_id: chain[i]!.grant_id });
}

export function approvedVerdict(approver: string): Verdict {
  return pass("policy.approved", `every policy of the chain allows this action with approver \`${approver}\``, approver);
}

/** A gated verdict (its reason a rope of two strings: nothing copied). */
function gatedVerdict(residual: string): Verdict {
  return fail("gated", "policy.gated", `this action needs a human's approval: an approver satisfying \`${residual}\``, { residual });
}
