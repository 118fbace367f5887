// The tool results the gateway answers itself: refusals and failures, worded for the model to adapt.
import type { AuthorizeResult } from "@agent-authority/sdk";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { GATEWAY_LIMITS } from "./limits.js";

/**
 * The JSON-RPC error code of a resource read, prompt get or completion the authority refused (a
 * server error of the implementation-defined range; docs/decisions/1306-gateway-whole-protocol.md).
 */
export const REFUSED_CODE = -32003;

/** An error result with one text block, cut to the refusal limit. */
export function errorResult(text: string): CallToolResult {
  const cut = text.length > GATEWAY_LIMITS.refusalCharsMax ? `${text.slice(0, GATEWAY_LIMITS.refusalCharsMax - 3)}...` : text;
  return { isError: true, content: [{ type: "text", text: cut }] };
}

/** A refusal names the outcome, the gate that decided and the reason; the call was not forwarded. */
export function refusalResult(tool: string, decision: AuthorizeResult): CallToolResult {
  return errorResult(refusalText(tool, decision));
}

/** The text of a refusal of `what` (a tool, a resource read, a prompt). */
export function refusalText(what: string, decision: AuthorizeResult): string {
  if (decision.ledger_id === null) {
    return `refused: \`${what}\` was not run because the authority server could not decide (${decision.reason}); nothing was forwarded`;
  }
  const gate = decision.decided_by ?? "unknown";
  return `refused: ${decision.outcome} by the ${gate} gate (${decision.reason_code}): ${decision.reason}; \`${what}\` was not run (decision ${decision.ledger_id})`;
}
