// The tool results the gateway answers itself: refusals and failures, worded for the model to adapt.
import type { AuthorizeResult } from "@agent-authority/sdk";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { GATEWAY_LIMITS } from "./limits.js";

/** An error result with one text block, cut to the refusal limit. */
export function errorResult(text: string): CallToolResult {
  const cut = text.length > GATEWAY_LIMITS.refusalCharsMax ? `${text.slice(0, GATEWAY_LIMITS.refusalCharsMax - 3)}...` : text;
  return { isError: true, content: [{ type: "text", text: cut }] };
}

/** A refusal names the outcome, the gate that decided and the reason; the call was not forwarded. */
export function refusalResult(tool: string, decision: AuthorizeResult): CallToolResult {
  if (decision.ledger_id === null) {
    return errorResult(`refused: \`${tool}\` was not run because the authority server could not decide (${decision.reason}); nothing was forwarded`);
  }
  const gate = decision.decided_by ?? "unknown";
  return errorResult(
    `refused: ${decision.outcome} by the ${gate} gate (${decision.reason_code}): ${decision.reason}; \`${tool}\` was not run (decision ${decision.ledger_id})`,
  );
}
