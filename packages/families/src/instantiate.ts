// Instantiation: a family and parameter values to the body of a grant issue, bounds checked first.
import { resolveParameters, type ParameterProblem } from "./parameters.js";
import { substituteGrant } from "./placeholders.js";
import type { GrantFamilyBody } from "./schema.js";
import { validateGrantIssueBody, type SchemaError } from "./validate.js";

export interface InstantiatedGrant {
  readonly family_id: string;
  readonly family_version: number;
  readonly content_hash: string;
  /** A valid `POST /v1/grants` body; `require_approval` is set when the family asks for approval. */
  readonly grant: Readonly<Record<string, unknown>>;
  readonly approval_required: boolean;
}

export type InstantiateResult =
  | { readonly ok: true; readonly value: InstantiatedGrant }
  | { readonly ok: false; readonly parameterProblems: readonly ParameterProblem[]; readonly grantErrors: readonly SchemaError[] };

/** Whether a grant of this family with this budget is born `pending_approval`. */
export function approvalRequired(family: GrantFamilyBody, grant: Readonly<Record<string, unknown>>): boolean {
  const approval = family.approval;
  if (approval === undefined) return false;
  if (approval.required === true) return true;
  const budget = typeof grant["budget_amount_minor"] === "number" ? grant["budget_amount_minor"] : 0;
  return approval.above_budget_minor !== undefined && budget > approval.above_budget_minor;
}

/**
 * Checks the parameters against their types and bounds, substitutes them, and checks the grant
 * against the issue-body schema. The caller then runs the ordinary issue path (certification
 * check included); this function never issues anything.
 */
export function instantiateFamily(family: GrantFamilyBody, parameters: Readonly<Record<string, unknown>>): InstantiateResult {
  const resolved = resolveParameters(family.parameters, parameters);
  if (!resolved.ok) return { ok: false, parameterProblems: resolved.problems, grantErrors: [] };
  const grant = substituteGrant(family.grant, resolved.values) as Record<string, unknown>;
  const required = approvalRequired(family, grant);
  if (required) grant["require_approval"] = true;
  const grantErrors = validateGrantIssueBody(grant);
  if (grantErrors.length > 0) return { ok: false, parameterProblems: [], grantErrors };
  return {
    ok: true,
    value: {
      family_id: family.id,
      family_version: family.version,
      content_hash: family.content_hash,
      grant,
      approval_required: required,
    },
  };
}
