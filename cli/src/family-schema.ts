// The JSON Schema of a family as authored in YAML, for editors: the API's family body, hash optional.
import { grantFamilyBodySchema } from "@agent-authority/families";

/** Where the schema is published with the CLI package, relative to the package root. */
export const FAMILY_SCHEMA_FILE = "schemas/family.schema.json";

/**
 * The family body schema of `POST /v1/grant-families` (the one the compiler and the server
 * validate with), as an editor needs it for a YAML file: `content_hash` is optional, since the
 * compiler computes it, and the schema names itself and its draft.
 */
export function familyYamlSchema(): Record<string, unknown> {
  const {
    $id: _id,
    title: _title,
    required,
    ...rest
  } = grantFamilyBodySchema as unknown as Record<string, unknown> & { required: readonly string[] };
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: "urn:agent-authority:schema:family",
    title: "Agent Authority grant family",
    description:
      "A grant family as written in YAML: typed parameters, a grant template with ${param} placeholders, a policy and examples. `authority lint` checks everything this schema cannot (the policy, placeholders, bounds).",
    ...rest,
    required: required.filter((name) => name !== "content_hash"),
  };
}
