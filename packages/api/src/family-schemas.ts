// JSON Schemas of grant families (docs/families.md): the body of `POST /v1/grant-families` that the
// family compiler writes and the server validates (one schema for both), instantiation, the impact
// preview of a new version and the answers. Request schemas refuse unknown fields.
//
// The grant template is derived from `grantIssueBodySchema`, so the two cannot drift: every field of
// an issue body may also hold a `${param}` placeholder, and `require_approval` is left out because a
// family states its approval requirement once, in `approval`.

export const FAMILY_LIMITS = Object.freeze({
  parametersMax: 32,
  examplesMax: 256,
  reviewersMax: 16,
  familyIdCharsMax: 64,
  descriptionCharsMax: 2_000,
  enumValuesMax: 256,
  stringParameterCharsMax: 1_024,
  /** The most version numbers the read of one family lists (`versions`), newest first. */
  versionsListedMax: 100,
  /** The largest YAML source the compiler reads. */
  sourceBytesMax: 262_144,
  /** The longest parameter `pattern` (RE2 syntax, docs/families.md). */
  patternCharsMax: 1_000,
  /** The largest program a pattern may compile to: a match costs this many units per character at most. */
  patternInstructionsMax: 2_000,
  /** The most the pattern checks of one instantiation may cost (instructions × (max_length + 1), summed). */
  patternMatchUnitsMax: 2_097_152,
  /** The most all pattern checks of one compile (defaults, examples, enum values) may cost. */
  patternCheckUnitsMax: 4_194_304,
  /** Pattern and value pairs remembered within one compile, so that a repeated value costs nothing. */
  patternMemoEntriesMax: 4_096,
});

export const PARAMETER_NAME_PATTERN = "^[a-z][a-z0-9_]{0,63}$";

/** The nine gates of a decision, in order (docs/decisions.md). */
export const GATE_NAMES = ["grant", "status", "window", "audience", "certification", "scope", "conditions", "policy", "budget"] as const;

export const OUTCOMES = ["allow", "deny", "gated", "exhausted"] as const;

/** An RFC 3339 time with a zone, as `Date.parse` reads it. */
export const RFC3339_PATTERN = "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})$";

const placeholderString = { type: "string", pattern: "\\$\\{[a-z][a-z0-9_]*\\}" } as const;

export type JsonSchema = { readonly [key: string]: unknown };

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

function grantTemplateSchema(grantIssueBodySchema: JsonSchema): JsonSchema {
  const { $id: _id, title: _title, properties, ...rest } = grantIssueBodySchema;
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
          type: true,
          description: true,
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
        anyOf: [
          { required: ["enum"], properties: { enum: true } },
          { required: ["pattern", "example"], properties: { pattern: true, example: true } },
          { required: ["pattern", "default"], properties: { pattern: true, default: true } },
        ],
        properties: {
          type: true,
          description: true,
          enum: {
            type: "array",
            minItems: 1,
            maxItems: FAMILY_LIMITS.enumValuesMax,
            uniqueItems: true,
            items: { type: "string", maxLength: FAMILY_LIMITS.stringParameterCharsMax },
          },
          pattern: {
            type: "string",
            minLength: 1,
            maxLength: FAMILY_LIMITS.patternCharsMax,
            description: "RE2 syntax; matches the whole value (docs/families.md).",
          },
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

function exampleSchemaOf(sampleActionSchema: JsonSchema): JsonSchema {
  const { $id: _actionId, title: _actionTitle, ...sampleAction } = sampleActionSchema;
  return {
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
          at: {
            type: "string",
            pattern: RFC3339_PATTERN,
            description: "When the action happens (RFC 3339); absent: 2026-01-05T12:00:00Z.",
          },
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
  };
}

/** The schema of a family body, built from the issue-body and sample-action schemas it derives from. */
export interface GrantFamilyBodySchema {
  readonly $id: "GrantFamilyBody";
  readonly title: "GrantFamilyBody";
  readonly type: "object";
  readonly [keyword: string]: unknown;
}

/**
 * The body of `POST /v1/grant-families`, as `authority compile` writes it. A function of the two
 * schemas it derives from, so that this module needs nothing from `schemas.js` at load time.
 */
export function familyBodySchemaOf(grantIssueBodySchema: JsonSchema, sampleActionSchema: JsonSchema): GrantFamilyBodySchema {
  return {
    $id: "GrantFamilyBody",
    title: "GrantFamilyBody",
    type: "object",
    additionalProperties: false,
    required: ["id", "version", "reviewed_by", "parameters", "grant"],
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
      grant: grantTemplateSchema(grantIssueBodySchema),
      approval: {
        type: "object",
        additionalProperties: false,
        properties: {
          required: { type: "boolean", description: "Every grant of the family is born `pending_approval`." },
          above_budget_minor: {
            type: "integer",
            minimum: 0,
            maximum: Number.MAX_SAFE_INTEGER,
            description: "A grant whose `budget_amount_minor` exceeds this is born `pending_approval`.",
          },
          reason: { type: "string", maxLength: FAMILY_LIMITS.descriptionCharsMax },
        },
      },
      examples: { type: "array", maxItems: FAMILY_LIMITS.examplesMax, items: exampleSchemaOf(sampleActionSchema) },
      content_hash: {
        type: "string",
        pattern: "^sha256:[0-9a-f]{64}$",
        description: "SHA-256 of the reviewed content. Optional: the server computes it; when given, it must match.",
      },
    },
  };
}

const idBody = "[0-9a-hjkmnp-tv-z]{26}";
const familyId = {
  type: "string",
  pattern: `^fam_${idBody}$`,
  description: "A family id, `fam_…`: stable across the family's versions.",
} as const;
const parameterValue = { type: ["integer", "string", "boolean"] } as const;
const timestamp = { type: "string", description: "An RFC 3339 UTC time with milliseconds." } as const;
const outcome = { type: "string", enum: OUTCOMES } as const;
const gate = { type: ["string", "null"], enum: [...GATE_NAMES, null] } as const;
const enforcementMode = { type: "string", enum: ["observe", "enforce"] } as const;

/** The body of `POST /v1/grant-families/{family_id}/instantiate`. */
export const familyInstantiateBodySchema = {
  $id: "FamilyInstantiateBody",
  title: "FamilyInstantiateBody",
  type: "object",
  additionalProperties: false,
  properties: {
    parameters: {
      type: "object",
      maxProperties: FAMILY_LIMITS.parametersMax,
      propertyNames: { pattern: PARAMETER_NAME_PATTERN },
      additionalProperties: parameterValue,
      description: "A value for every parameter without a default; each is checked against its type and bounds.",
    },
    version: { type: "integer", minimum: 1, maximum: 1_000_000, description: "A reviewed version of the family; absent: the latest." },
  },
} as const;

/** The body of `POST /v1/grant-families/{family_id}/impact`: a candidate version and the window. */
export const familyImpactBodySchema = {
  $id: "FamilyImpactBody",
  title: "FamilyImpactBody",
  type: "object",
  additionalProperties: false,
  description: "The candidate as compiled JSON (`family`) or as the YAML a reviewer reads (`source`): exactly one of the two.",
  oneOf: [
    { required: ["family"], properties: { family: true } },
    { required: ["source"], properties: { source: true } },
  ],
  properties: {
    family: { $ref: "GrantFamilyBody", description: "The candidate version, as `authority compile` writes it." },
    source: {
      type: "string",
      maxLength: FAMILY_LIMITS.sourceBytesMax,
      description:
        "The candidate version's YAML file, compiled by the server as `authority compile` compiles it; an error answers `invalid_family` with each diagnostic's line and column in this text.",
    },
    days: { type: "integer", minimum: 1, maximum: 90, default: 30, description: "Replay the sealed decisions of the last N days." },
  },
} as const;

/** One version of a family as the server keeps it. */
export const grantFamilySchema = {
  $id: "GrantFamily",
  title: "GrantFamily",
  type: "object",
  required: ["id", "name", "version", "content_hash", "reviewed_by", "parameters", "grant", "pushed_at", "pushed_by"],
  properties: {
    id: familyId,
    name: { type: "string", description: "The family's `id` in its YAML file." },
    version: { type: "integer" },
    content_hash: { type: "string", description: "Recomputed by the server from the reviewed content (decision 0401)." },
    reviewed_by: { type: "array", items: { type: "string" } },
    description: { type: "string" },
    parameters: { type: "object" },
    grant: { type: "object" },
    approval: { type: "object" },
    examples: { type: "array", items: { type: "object" } },
    pushed_at: timestamp,
    pushed_by: { type: "string" },
    versions: {
      type: "array",
      items: { type: "integer" },
      maxItems: FAMILY_LIMITS.versionsListedMax,
      description:
        "In the answer of `GET /v1/grant-families/{family_id}`: the family's version numbers, newest first (at most 100); numbers may skip, since a push may raise the version by more than one.",
    },
    created: { type: "boolean", description: "In the answer of a push: whether this push made the version." },
  },
} as const;

export const grantFamilyListSchema = {
  $id: "GrantFamilyList",
  title: "GrantFamilyList",
  type: "object",
  required: ["families", "next_after"],
  properties: {
    families: { type: "array", items: { $ref: "GrantFamily" } },
    next_after: { type: ["string", "null"] },
  },
} as const;

/** What a candidate version would change in the family's sealed decisions. */
export const familyImpactSchema = {
  $id: "FamilyImpact",
  title: "FamilyImpact",
  type: "object",
  required: [
    "family_id",
    "candidate_version",
    "candidate_content_hash",
    "days",
    "since",
    "replayed",
    "changed",
    "candidate_modes",
    "changes",
    "skipped",
  ],
  properties: {
    family_id: familyId,
    current_version: { type: ["integer", "null"] },
    candidate_version: { type: "integer" },
    candidate_content_hash: { type: "string" },
    days: { type: "integer" },
    since: timestamp,
    replayed: { type: "integer", description: "Sealed decisions replayed under the candidate's terms." },
    changed: { type: "integer", description: "How many of them would get another enforce outcome." },
    truncated: { type: "boolean", description: "Whether the window held more decisions than one preview replays." },
    symbolic: {
      type: "object",
      description:
        "The symbolic diff of the current version and the candidate, for any action (docs/analysis.md): `relation` (`equivalent`, `narrows`, `widens`, `incomparable`, `unknown`), `widening` and `narrowing` witnesses (each with its `axis`, `input` and `parameters`), and `reason` when unknown.",
      required: ["relation", "widening", "narrowing"],
      properties: {
        relation: { type: "string", enum: ["equivalent", "narrows", "widens", "incomparable", "unknown"] },
        widening: { type: "array", items: { type: "object" } },
        narrowing: { type: "array", items: { type: "object" } },
        reason: { type: "string" },
      },
    },
    candidate_modes: {
      type: "array",
      description:
        "Per mode the candidate runs the replayed grants in: how many grants, decisions replayed, decisions `enforce` would refuse, and decisions that mode itself refuses (in `observe`, only those on a grant that is not usable).",
      items: {
        type: "object",
        required: ["mode", "grants", "replayed", "enforce_refusals", "refusals"],
        properties: {
          mode: enforcementMode,
          grants: { type: "integer" },
          replayed: { type: "integer" },
          enforce_refusals: { type: "integer" },
          refusals: { type: "integer" },
        },
      },
    },
    changes: {
      type: "array",
      items: {
        type: "object",
        required: ["ledger_id", "grant_id", "decided_at", "tool", "before", "after"],
        properties: {
          ledger_id: { type: "string" },
          grant_id: { type: "string" },
          decided_at: timestamp,
          tool: { type: "string" },
          before: { type: "object", required: ["outcome"], properties: { outcome, decided_by: gate, reason_code: { type: "string" } } },
          after: {
            type: "object",
            required: ["outcome", "mode", "answer"],
            description:
              "`outcome` is what `enforce` would decide, whatever mode the candidate runs in; `answer` is what the candidate answers in its own `mode` (`observe` refuses only a grant that is not usable at all).",
            properties: {
              outcome,
              decided_by: gate,
              reason_code: { type: "string" },
              reason: { type: "string" },
              mode: enforcementMode,
              answer: outcome,
            },
          },
        },
      },
    },
    skipped: {
      type: "array",
      items: {
        type: "object",
        required: ["grant_id", "reason"],
        properties: { grant_id: { type: "string" }, decisions: { type: "integer" }, reason: { type: "string" } },
      },
    },
  },
} as const;

export const FAMILY_ID_PREFIX = "fam";
