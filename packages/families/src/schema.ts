// The JSON Schema of `POST /v1/grant-families`: the compiler validates with it and so does the server.
//
// The grant template is derived from the API's `grantIssueBodySchema`, so the two cannot drift:
// every field of an issue body may also hold a `${param}` placeholder, and `require_approval` is
// left out because a family states its approval requirement once, in `approval`.
import { grantIssueBodySchema, sampleActionSchema } from "@agent-authority/api";

export const FAMILY_LIMITS = Object.freeze({
  parametersMax: 32,
  examplesMax: 256,
  reviewersMax: 16,
  familyIdCharsMax: 64,
  descriptionCharsMax: 2_000,
  enumValuesMax: 256,
  stringParameterCharsMax: 1_024,
  /** The largest YAML source the compiler reads. */
  sourceBytesMax: 262_144,
});

/** A `${name}` placeholder: a parameter name in lower snake case. */
export const PLACEHOLDER_PATTERN = /\$\{([^}]*)\}/g;
export const PARAMETER_NAME_PATTERN = "^[a-z][a-z0-9_]{0,63}$";

/** The nine gates of a decision, in order (DESIGN.md §5). */
export const GATE_NAMES = [
  "grant", "status", "window", "audience", "certification", "scope", "conditions", "policy", "budget",
] as const;

export const OUTCOMES = ["allow", "deny", "gated", "exhausted"] as const;

/** An RFC 3339 time with a zone, as `Date.parse` reads it. */
export const RFC3339_PATTERN = "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})$";

const placeholderString = { type: "string", pattern: "\\$\\{[a-z][a-z0-9_]*\\}" } as const;

type JsonSchema = { readonly [key: string]: unknown };

/** Each leaf of an issue-body schema also accepts a string with a placeholder. */
function templateOf(schema: JsonSchema): JsonSchema {
  if (schema["type"] === "object" && typeof schema["properties"] === "object") {
    const properties: Record<string, JsonSchema> = {};
    for (const [name, sub] of Object.entries(schema["properties"] as Record<string, JsonSchema>)) {
      properties[name] = templateOf(sub);
    }
    return { ...schema, properties };
  }
  if (schema["type"] === "array" && typeof schema["items"] === "object") {
    return { ...schema, items: templateOf(schema["items"] as JsonSchema) };
  }
  const { description: _description, default: _default, ...rest } = schema;
  return { anyOf: [rest, placeholderString] };
}

function grantTemplateSchema(): JsonSchema {
  const { $id: _id, title: _title, properties, ...rest } = grantIssueBodySchema as unknown as JsonSchema;
  const { require_approval: _approval, ...templated } = properties as Record<string, JsonSchema>;
  return templateOf({ ...rest, type: "object", properties: templated });
}

const shortText = { type: "string", minLength: 1, maxLength: 254 } as const;

const parameterSchema = {
  type: "object",
  required: ["type"],
  properties: {
    type: { enum: ["int", "string", "bool"] },
    description: { type: "string", maxLength: FAMILY_LIMITS.descriptionCharsMax },
  },
  allOf: [
    {
      if: { properties: { type: { const: "int" } } },
      then: {
        additionalProperties: false,
        required: ["type", "min", "max"],
        properties: {
          type: true, description: true,
          min: { type: "integer", minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
          max: { type: "integer", minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
          default: { type: "integer" },
          example: { type: "integer" },
        },
      },
    },
    {
      if: { properties: { type: { const: "string" } } },
      then: {
        additionalProperties: false,
        anyOf: [{ required: ["enum"] }, { required: ["pattern", "example"] }, { required: ["pattern", "default"] }],
        properties: {
          type: true, description: true,
          enum: {
            type: "array", minItems: 1, maxItems: FAMILY_LIMITS.enumValuesMax, uniqueItems: true,
            items: { type: "string", maxLength: FAMILY_LIMITS.stringParameterCharsMax },
          },
          pattern: { type: "string", minLength: 1, maxLength: 1_000 },
          max_length: { type: "integer", minimum: 1, maximum: FAMILY_LIMITS.stringParameterCharsMax },
          default: { type: "string", maxLength: FAMILY_LIMITS.stringParameterCharsMax },
          example: { type: "string", maxLength: FAMILY_LIMITS.stringParameterCharsMax },
        },
      },
    },
    {
      if: { properties: { type: { const: "bool" } } },
      then: {
        additionalProperties: false,
        properties: { type: true, description: true, default: { type: "boolean" }, example: { type: "boolean" } },
      },
    },
  ],
} as const;

const { $id: _actionId, title: _actionTitle, ...sampleAction } = sampleActionSchema as unknown as JsonSchema;

const exampleSchema = {
  type: "object",
  additionalProperties: false,
  required: ["name", "action", "expect"],
  properties: {
    name: { type: "string", minLength: 1, maxLength: 200 },
    parameters: {
      type: "object",
      propertyNames: { pattern: PARAMETER_NAME_PATTERN },
      additionalProperties: { type: ["integer", "string", "boolean"] },
    },
    action: {
      ...sampleAction,
      properties: {
        ...(sampleAction["properties"] as Record<string, unknown>),
        at: { type: "string", pattern: RFC3339_PATTERN, description: "When the action happens (RFC 3339); absent: 2026-01-05T12:00:00Z." },
      },
    },
    usage: {
      type: "object",
      additionalProperties: false,
      properties: {
        uses: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
        spent_minor: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
      },
    },
    expect: { enum: OUTCOMES },
    gate: { enum: GATE_NAMES },
    residual: { type: "string", maxLength: 4_096 },
  },
} as const;

/** The body of `POST /v1/grant-families`, as `authority compile` writes it. */
export const grantFamilyBodySchema = {
  $id: "GrantFamilyBody",
  title: "GrantFamilyBody",
  type: "object",
  additionalProperties: false,
  required: ["id", "version", "reviewed_by", "parameters", "grant", "content_hash"],
  properties: {
    id: { type: "string", pattern: "^[a-z][a-z0-9-]{0,63}$", description: "Stable name of the family." },
    version: { type: "integer", minimum: 1, maximum: 1_000_000 },
    reviewed_by: { type: "array", minItems: 1, maxItems: FAMILY_LIMITS.reviewersMax, uniqueItems: true, items: shortText },
    description: { type: "string", maxLength: FAMILY_LIMITS.descriptionCharsMax },
    parameters: {
      type: "object",
      maxProperties: FAMILY_LIMITS.parametersMax,
      propertyNames: { pattern: PARAMETER_NAME_PATTERN },
      additionalProperties: parameterSchema,
    },
    grant: grantTemplateSchema(),
    approval: {
      type: "object",
      additionalProperties: false,
      properties: {
        required: { type: "boolean", description: "Every grant of the family is born `pending_approval`." },
        above_budget_minor: {
          type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER,
          description: "A grant whose `budget_amount_minor` exceeds this is born `pending_approval`.",
        },
        reason: { type: "string", maxLength: FAMILY_LIMITS.descriptionCharsMax },
      },
    },
    examples: { type: "array", maxItems: FAMILY_LIMITS.examplesMax, items: exampleSchema },
    content_hash: { type: "string", pattern: "^sha256:[0-9a-f]{64}$", description: "SHA-256 of the reviewed content." },
  },
} as const;

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
