// Builds the OpenAPI 3.1 document of v1 from the same schemas the server validates requests with.

import { ENDPOINTS, type Endpoint } from "./endpoints.js";
import { CONTENTION_RETRY_AFTER_SECONDS, PROBLEM_CODES, UNAVAILABLE_RETRY_AFTER_SECONDS, type ProblemCode } from "./problems.js";
import { allSchemas } from "./schemas.js";
import { authzenPaths } from "./authzen-openapi.js";

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

/** 409: the operation's own conflicts, if any, and `contention`, which carries `retry-after`. */
function withContention(conflict: string | undefined): Json {
  const contention =
    "`contention`: the database was busy with other requests past the server's retries; nothing was written, " +
    "the `Idempotency-Key` included, and the same request may be sent again after `retry-after` seconds";
  return {
    ...(problemResponse(conflict === undefined ? contention : `${conflict}; or ${contention}`) as object),
    headers: {
      "retry-after": {
        description: `With \`contention\` only: seconds to wait before sending the request again (${CONTENTION_RETRY_AFTER_SECONDS}).`,
        required: false,
        schema: { type: "integer", minimum: 0 },
      },
    },
  };
}

/** 503 `unavailable`: the database is unreachable or failing over; carries `retry-after`. */
function unavailable(): Json {
  const text =
    "`unavailable`: the database is unreachable, or no host is the primary (a failover); send the same request again, " +
    "with the same `Idempotency-Key`, after `retry-after` seconds";
  return {
    ...(problemResponse(text) as object),
    headers: {
      "retry-after": {
        description: `With \`unavailable\` only: seconds to wait before sending the request again (${UNAVAILABLE_RETRY_AFTER_SECONDS}).`,
        required: false,
        schema: { type: "integer", minimum: 0 },
      },
    },
  };
}

/** A problem status described by the codes it may carry. */
function problemsOf(description: string, codes: readonly ProblemCode[]): Json {
  return problemResponse(`${description} (${codes.map((c) => `\`${c}\``).join(", ")})`);
}

function successResponse(e: Endpoint, description: string): Json {
  if (e.mediaType === "text/event-stream") {
    // Each event's `data:` line is one `Event` (components.schemas.Event); the stream is text.
    return {
      description: `${description}. Each event: \`id:\` its sequence, \`event:\` its type, \`data:\` one \`Event\` as JSON (components.schemas.Event); \`: heartbeat\` comments keep it open.`,
      content: { [e.mediaType]: { schema: { type: "string" } } },
    };
  }
  const schema = e.response !== "" ? ref(e.response) : e.mediaType === "text/plain" ? { type: "string" } : { type: "object" };
  return { description, content: { [e.mediaType]: { schema } } };
}

function parametersOf(e: Endpoint, pathNames: readonly string[]): Json[] {
  const path: Json[] = pathNames.map((name) => ({ name, in: "path", required: true, schema: { type: "string" } }));
  const query: Json[] = e.query.map((name) => ({ name, in: "query", required: false, schema: { type: "string" } }));
  const keyed = e.method === "post" && e.roles !== null;
  const idempotency: Json[] = keyed
    ? [
        {
          name: "Idempotency-Key",
          in: "header",
          required: false,
          schema: { type: "string" },
          description: "The same key and body replay the first answer; another body is 422 `idempotency_key_reused`.",
        },
      ]
    : [];
  return [...path, ...query, ...idempotency];
}

/** Every status an operation can answer, each with the problem codes it may carry. */
function responsesOf(e: Endpoint, pathNames: readonly string[]): { [status: string]: Json } {
  const keyed = e.roles !== null;
  const post = e.method === "post" && keyed;
  const responses: { [status: string]: Json } = { [String(e.status)]: successResponse(e, e.summary) };
  if (e.existingStatus !== undefined)
    responses[String(e.existingStatus)] = successResponse(e, "it already existed: the same answer, nothing created");
  const malformed: ProblemCode[] = [
    ...(pathNames.length > 0 ? ["invalid_id" as const] : []),
    ...(e.query.length > 0 ? ["invalid_query" as const] : []),
    ...(e.query.includes("cursor") ? ["invalid_cursor" as const] : []),
    ...(e.body !== null ? (["malformed_json", "invalid_body", "unknown_field", "body_too_deep", "invalid_text"] as const) : []),
    ...(post ? ["invalid_idempotency_key" as const] : []),
  ];
  if (malformed.length > 0) responses["400"] = problemsOf("malformed request", malformed);
  if (keyed) {
    responses["401"] = problemResponse("no valid API key (`unauthenticated`)");
    responses["403"] = problemResponse("a role is missing (`forbidden`, `human_required`) or a rule refuses the caller");
  }
  // A resource named in the path, or an id in a body, may name nothing.
  if (pathNames.length > 0 || post) responses["404"] = problemResponse("unknown resource");
  // A replay of a key's creation: the secret was shown once and is not stored.
  const conflict =
    e.operationId === "createKey"
      ? "a replay of the key's creation under its `Idempotency-Key` (`key_secret_shown_once`, naming `key_id`)"
      : post
        ? "conflicts with the resource's state"
        : undefined;
  // Every operation that reads the database with a key may lose a race there past the server's retries.
  if (keyed) responses["409"] = withContention(conflict);
  if (e.body !== null) {
    responses["413"] = problemResponse("body over the size limit (`body_too_large`)");
    responses["415"] = problemResponse("a body not declared as JSON (`unsupported_media_type`)");
    responses["422"] = problemResponse("well-formed but breaks a rule");
  }
  responses["500"] = problemResponse("the server failed (`internal_error`); never carries internals");
  if (e.operationId === "streamEvents") {
    responses["400"] = problemsOf("malformed request", ["invalid_query", "invalid_last_event_id"]);
    responses["429"] = {
      ...(problemResponse("the key holds the most streams it may open at once (`too_many_streams`)") as object),
      headers: {
        "retry-after": {
          description: "Seconds to wait before opening another stream.",
          required: true,
          schema: { type: "integer", minimum: 0 },
        },
      },
    };
  }
  if (e.operationId === "ready")
    responses["503"] = problemResponse("not ready: the database or the authorize thread does not answer (`not_ready`)");
  // Every operation that reads the database with a key may find it unavailable (decision 0316).
  else if (keyed) responses["503"] = unavailable();
  return responses;
}

function operation(e: Endpoint): Json {
  const pathNames = [...e.path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]!);
  const op: { [key: string]: Json } = {
    operationId: e.operationId,
    summary: e.summary,
    description:
      e.roles === null ? "No key needed." : `Roles: ${e.roles.map((r) => `\`${r}\``).join(", ")}${e.human ? "; a human key only" : ""}.`,
    security: e.roles === null ? [] : [{ bearer: [] }, { apiKey: [] }],
    parameters: parametersOf(e, pathNames),
    responses: responsesOf(e, pathNames),
  };
  if (e.body !== null) {
    op["requestBody"] = { required: !e.bodyOptional, content: { "application/json": { schema: ref(e.body) } } };
  }
  return op;
}

/** The OpenAPI 3.1 document; `serverUrl` is the base URL ending in `/v1`. */
export function buildOpenApiDocument(serverUrl = "http://127.0.0.1:8080/v1", version = "0.2.0"): Json {
  const schemas: { [name: string]: Json } = {};
  for (const schema of allSchemas) schemas[schema.$id] = toComponent(schema);
  const paths: { [path: string]: { [method: string]: Json } } = {};
  for (const e of ENDPOINTS) (paths[e.path] ??= {})[e.method] = operation(e);
  // The AuthZEN paths are read-only JSON (module-level literals, `as const`); the document copies them in.
  const authzen = authzenPaths(serverUrl) as unknown as Record<string, Json>;
  return {
    openapi: "3.1.0",
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    info: {
      title: "Agent Authority",
      version,
      description:
        "Bounded, auditable, revocable authority for software agents. Errors are RFC 9457 problem details; " +
        `their codes: ${Object.keys(PROBLEM_CODES)
          .map((c) => `\`${c}\``)
          .join(", ")}. ` +
        "A path v1 does not define answers `components.responses.RouteNotFound`; a method a path does not accept answers " +
        "`components.responses.MethodNotAllowed`. A request the HTTP parser refuses before any route answers " +
        "`components.responses.MalformedRequest`, `RequestTimeout` or `HeadersTooLarge`. Every string of every request may hold any Unicode text but U+0000 and " +
        "lone surrogates (400 `invalid_text`). Every answer carries `cache-control: no-store` and `x-content-type-options: nosniff`.",
    },
    servers: [{ url: serverUrl }],
    components: {
      schemas,
      // Answers that belong to no operation: a path v1 does not define, and a method a path does not accept.
      responses: {
        RouteNotFound: problemResponse("no such endpoint (`route_not_found`)"),
        MethodNotAllowed: {
          ...(problemResponse("the path does not accept this method (`method_not_allowed`); `allow` lists the methods it does") as object),
          headers: { allow: { description: "The methods the path accepts.", schema: { type: "string" } } },
        },
        // Answers of the HTTP parser, before any route: the connection is closed after each.
        MalformedRequest: problemResponse(
          "the request line or a header is not valid HTTP/1.1 (`malformed_request`); the connection is closed",
        ),
        RequestTimeout: problemResponse(
          "the headers or the whole request did not arrive within the server's timeouts (`request_timeout`); the connection is closed",
        ),
        HeadersTooLarge: problemResponse("the request's headers exceed the server's limit (`headers_too_large`); the connection is closed"),
      },
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer" },
        apiKey: { type: "apiKey", in: "header", name: "x-api-key" },
      },
    },
    paths: { ...paths, ...authzen },
  };
}
