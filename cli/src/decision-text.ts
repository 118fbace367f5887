// A decision as text: one line per gate, then the outcome.
import type { Decision } from "@agent-authority/engine";
import type { SampleAction } from "@agent-authority/families";
import type { Paint } from "./terminal.js";

export function actionLine(action: SampleAction): string {
  const parts = [`tool \`${action.tool}\``];
  if (action.amount_minor !== undefined) parts.push(`${action.amount_minor} ${action.currency ?? ""}`.trim());
  if (action.audience !== undefined) parts.push(`audience \`${action.audience}\``);
  if (action.args !== undefined) parts.push(`args ${JSON.stringify(action.args)}`);
  if (action.context?.clean !== undefined) parts.push(action.context.clean ? "clean context" : "unclean context");
  if (action.approver !== undefined && action.approver !== null) parts.push(`approved by \`${action.approver}\``);
  if (action.at !== undefined) parts.push(`at ${action.at}`);
  return parts.join(", ");
}

export function decisionText(decision: Decision, paint: Paint, indent = "  "): string {
  const width = Math.max(...decision.gates.map((g) => g.gate.length));
  let out = "";
  for (const gate of decision.gates) {
    const mark =
      gate.result === "pass"
        ? paint.green("pass")
        : gate.result === "fail"
          ? paint.red("FAIL")
          : paint.dim(gate.result === "skipped" ? "skip" : "----");
    const detail = gate.result === "not_reached" ? paint.dim("not reached") : `${gate.code}: ${gate.reason}`;
    out += `${indent}${mark}  ${gate.gate.padEnd(width)}  ${detail}\n`;
  }
  const outcome = decision.outcome === "allow" ? paint.green(decision.outcome) : paint.red(decision.outcome);
  out += `${indent}outcome: ${paint.bold(outcome)}`;
  if (decision.would_outcome !== undefined) out += ` (observe; enforce would say ${decision.would_outcome})`;
  if (decision.residual !== undefined) out += `; approvable by: ${decision.residual}`;
  return `${out}\n`;
}
