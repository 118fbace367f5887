// Waiting for a human to approve a gated call: polling the decision's approval, reporting progress.
import { AuthorityProblemError } from "@agent-authority/sdk";
import type { GatewayContext } from "./context.js";
import type { ProgressRelay } from "./progress.js";
import { messageOf } from "./upstreams.js";

export type Waited = { readonly ok: true; readonly approvalId: string } | { readonly ok: false; readonly message: string };

/** Where a human approves this decision: the console's gated decisions view. */
export function consoleLink(consoleUrl: string, ledgerId: string): string {
  return `${consoleUrl.replace(/\/+$/, "")}/#gated/${encodeURIComponent(ledgerId)}`;
}

/**
 * Polls `GET /decisions/{ledger_id}/approval` until a human approved, the configured wait is over
 * or the client cancelled. Only `approval_not_found` and an unavailable server mean "keep waiting";
 * any other problem ends the wait, and so does the deadline: the call is then refused.
 */
export async function waitForApproval(
  ctx: GatewayContext,
  ledgerId: string,
  signal: AbortSignal,
  progress: ProgressRelay | undefined,
): Promise<Waited> {
  const { waitSeconds, pollMs } = ctx.config.approval;
  const link = consoleLink(ctx.config.authority.consoleUrl, ledgerId);
  const started = Date.now();
  const deadline = started + waitSeconds * 1000;
  ctx.log.info("waiting for approval", { ledger_id: ledgerId, wait_seconds: waitSeconds, console: link });
  for (;;) {
    if (signal.aborted) {
      ctx.log.warn("approval wait abandoned", { ledger_id: ledgerId, reason: "the client cancelled", waited_ms: Date.now() - started });
      await tellApprover(ctx, ledgerId, "cancelled", Date.now() - started);
      return { ok: false, message: `refused: the client cancelled while decision ${ledgerId} waited for approval at ${link}` };
    }
    try {
      const approval = await ctx.authority.decisions.approval(ledgerId, { signal });
      ctx.log.info("approved", { ledger_id: ledgerId, approval_id: approval.approval_id, approver: approval.approver });
      return { ok: true, approvalId: approval.approval_id };
    } catch (error) {
      if (error instanceof AuthorityProblemError && error.problem.code !== "approval_not_found") {
        return {
          ok: false,
          message: `refused: gated, and the approval of decision ${ledgerId} cannot be read (${error.problem.code}); approve it at ${link} and call again`,
        };
      }
      if (!(error instanceof AuthorityProblemError))
        ctx.log.warn("approval not readable yet", { ledger_id: ledgerId, error: messageOf(error) });
    }
    const now = Date.now();
    if (now >= deadline) break;
    // Progress must strictly increase (MCP): seconds waited, to the millisecond, never repeated.
    const waited = Math.max((progress?.last ?? 0) + 0.001, (now - started) / 1000);
    await progress?.report(waited, waitSeconds, `waiting for a human to approve decision ${ledgerId} at ${link}`);
    await sleep(Math.min(pollMs, deadline - now), signal);
  }
  ctx.log.warn("approval wait abandoned", { ledger_id: ledgerId, reason: "no approval in time", waited_ms: Date.now() - started });
  await tellApprover(ctx, ledgerId, "timeout", Date.now() - started);
  return {
    ok: false,
    message: `refused: gated: decision ${ledgerId} needs a human's approval and none came within ${waitSeconds} s; a human can approve it at ${link}`,
  };
}

/** Reports the abandoned wait to the server, which shows it in the console; a failure is only logged. */
async function tellApprover(ctx: GatewayContext, ledgerId: string, reason: "timeout" | "cancelled", waitedMs: number): Promise<void> {
  try {
    await ctx.authority.decisions.abandoned(ledgerId, { reason, waited_ms: Math.min(waitedMs, 86_400_000) });
  } catch (error) {
    ctx.log.warn("abandoned wait not reported", { ledger_id: ledgerId, error: messageOf(error) });
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}
