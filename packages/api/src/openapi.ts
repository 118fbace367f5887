// Builds the OpenAPI 3.1 document of v1 from the same schemas the server validates requests with.

import { ENDPOINTS, type Endpoint } from "./endpoints.js";
import { PROBLEM_CODES } from "./problems.js";
import { allSchemas } from "./schemas.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** JSON Schema `$ref: "Name"` (an `$id`) becomes an OpenAPI component reference; `$id` is dropped. */
function toComponent(value: unknown): Json {
  if (Array.isArray(value)) return value.map(toComponent);
  if (value === null || typeof value !== "object") return value as Json;
  const out: { [key: string]: Json } = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key === "$id") continue;
    out[key] = key === "$ref" && typeof inner === "string" ? `#/components/schemas/${inner}` : toComponent(inner);
  }
  return out;
}

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });

function problemResponse(description: string): Json {
  return { description, content: { "application/problem+json": { schema: ref("Problem") } } };
}

function operation(e: Endpoint): Json {
  const parameters: Json[] = [...e.path.matchAll(/\{([a-z_]+)\}/g)].map((m) => ({
    name: m[1]!, in: "path", required: true, schema: { type: "string" },
  }));
  const responses: { [status: string]: Json } = {
    [String(e.status)]: {
      description: e.summary,
      content: { [e.mediaType]: { schema: e.response !== "" ? ref(e.response) : e.mediaType === "text/plain" ? { type: "string" } : { type: "object" } } },
    },
  };
  if (e.roles !== null) {
    responses["401"] = problemResponse("no valid API key (`unauthenticated`)");
    responses["403"] = problemResponse("a role is missing (`forbidden`) or a rule refuses the caller");
  }
  if (e.body !== null) {
    responses["400"] = problemResponse("malformed body (`malformed_json`, `invalid_body`, `unknown_field`, `body_too_deep`)");
    responses["413"] = problemResponse("body over the size limit (`body_too_large`)");
  }
  if (parameters.length > 0) responses["404"] = problemResponse("unknown resource");
  if (e.method === "post" && e.roles !== null && e.path.includes("{")) responses["409"] = problemResponse("conflicts with the resource's state");
  // A replay of a key's creation: the secret was shown once and is not stored.
  if (e.operationId === "createKey") responses["409"] = problemResponse("a replay of the key's creation under its `Idempotency-Key` (`key_secret_shown_once`, naming `key_id`)");
  if (e.body !== null) responses["422"] = problemResponse("well-formed but breaks a rule");
  responses["500"] = problemResponse("the server failed (`internal_error`); never carries internals");
  const op: { [key: string]: Json } = {
    operationId: e.operationId,
    summary: e.summary,
    description: e.roles === null
      ? "No key needed."
      : `Roles: ${e.roles.map((r) => `\`${r}\``).join(", ")}${e.human ? "; a human key only" : ""}.`,
    security: e.roles === null ? [] : [{ bearer: [] }, { apiKey: [] }],
    parameters,
    responses,
  };
  if (e.body !== null) {
    op["requestBody"] = { required: !e.bodyOptional, content: { "application/json": { schema: ref(e.body) } } };
  }
  return op;
}

/** The OpenAPI 3.1 document; `serverUrl` is the base URL ending in `/v1`. */
export function buildOpenApiDocument(serverUrl = "http://127.0.0.1:8080/v1", version = "0.1.0"): Json {
  const schemas: { [name: string]: Json } = {};
  for (const schema of allSchemas) schemas[schema.$id] = toComponent(schema);
  const paths: { [path: string]: { [method: string]: Json } } = {};
  for (const e of ENDPOINTS) (paths[e.path] ??= {})[e.method] = operation(e);
  return {
    openapi: "3.1.0",
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    info: {
      title: "Agent Authority",
      version,
      description: "Bounded, auditable, revocable authority for software agents. Errors are RFC 9457 problem details; "
        + `their codes: ${Object.keys(PROBLEM_CODES).map((c) => `\`${c}\``).join(", ")}.`,
    },
    servers: [{ url: serverUrl }],
    components: {
      schemas,
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer" },
        apiKey: { type: "apiKey", in: "header", name: "x-api-key" },
      },
    },
    paths,
  };
}
