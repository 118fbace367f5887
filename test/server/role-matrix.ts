// The role matrix of docs/security.md, derived from the endpoint table of @agent-authority/api.

import { ENDPOINTS, ROLES, type Endpoint } from "@agent-authority/api";

function cell(endpoint: Endpoint, role: string): string {
  if (endpoint.roles === null) return "open";
  if (!endpoint.roles.includes(role as never)) return "–";
  if (role === "agent") return "own";
  return endpoint.human ? "human" : "yes";
}

/** The Markdown table: one row per endpoint, one column per role. */
export function roleMatrixMarkdown(): string {
  const header = `| endpoint | ${ROLES.join(" | ")} |`;
  const rule = `|---|${ROLES.map(() => "---").join("|")}|`;
  const rows = ENDPOINTS.map((e) => `| \`${e.method.toUpperCase()} ${e.path}\` | ${ROLES.map((r) => cell(e, r)).join(" | ")} |`);
  return [header, rule, ...rows].join("\n");
}
