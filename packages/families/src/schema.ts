// The JSON Schema of `POST /v1/grant-families` and its limits live in `@agent-authority/api` (the
// server validates request bodies with it and builds OpenAPI from it); the compiler validates with
// the very same constant, re-exported here with the TypeScript shapes of a family body.
import { FAMILY_LIMITS, GATE_NAMES, OUTCOMES, PARAMETER_NAME_PATTERN, RFC3339_PATTERN, grantFamilyBodySchema } from "@agent-authority/api";

export { FAMILY_LIMITS, GATE_NAMES, OUTCOMES, PARAMETER_NAME_PATTERN, RFC3339_PATTERN, grantFamilyBodySchema };

/** A `${name}` placeholder: a parameter name in lower snake case. */
export const PLACEHOLDER_PATTERN = /\$\{([^}]*)\}/;

export type ParameterType = "int" | "string" | "bool";
export type ParameterValue = number | string | boolean;

export interface ParameterSpec {
  readonly type: ParameterType;
  readonly description?: string;
  readonly min?: number;
  readonly max?: number;
  readonly enum?: readonly string[];
  readonly pattern?: string;
  readonly max_length?: number;
  readonly default?: ParameterValue;
  readonly example?: ParameterValue;
}

export type Outcome = (typeof OUTCOMES)[number];
export type GateName = (typeof GATE_NAMES)[number];

export interface SampleAction {
  readonly tool: string;
  readonly amount_minor?: number;
  readonly currency?: string;
  readonly audience?: string;
  readonly args?: Readonly<Record<string, unknown>>;
  readonly context?: { readonly clean?: boolean };
  readonly approver?: string | null;
  readonly at?: string;
}

export interface FamilyExample {
  readonly name: string;
  readonly parameters?: Readonly<Record<string, ParameterValue>>;
  readonly action: SampleAction;
  readonly usage?: { readonly uses?: number; readonly spent_minor?: number };
  readonly expect: Outcome;
  readonly gate?: GateName;
  readonly residual?: string;
}

export interface FamilyApproval {
  readonly required?: boolean;
  readonly above_budget_minor?: number;
  readonly reason?: string;
}

/** The JSON body of `POST /v1/grant-families`. */
export interface GrantFamilyBody {
  readonly id: string;
  readonly version: number;
  readonly reviewed_by: readonly string[];
  readonly description?: string;
  readonly parameters: Readonly<Record<string, ParameterSpec>>;
  readonly grant: Readonly<Record<string, unknown>>;
  readonly approval?: FamilyApproval;
  readonly examples?: readonly FamilyExample[];
  readonly content_hash: string;
}
