// The AuthZEN 1.0 operations of the OpenAPI document: served beside v1 at the server's origin, so
// each path item names its own server (the origin) instead of the document's `/v1` base.

type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json };

const entity: Json = {
  type: "object",
  required: ["type", "id"],
  properties: { type: { type: "string" }, id: { type: "string" }, properties: { type: "object" } },
} as const;
const action: Json = {
  type: "object",
  required: ["name"],
  properties: { name: { type: "string" }, properties: { type: "object" } },
} as const;
const decision: Json = {
  type: "object",
  required: ["decision"],
  properties: {
    decision: { type: "boolean", description: "`true` only for the outcome `allow`." },
    context: { type: "object", description: "The ledger id, outcome, gate, reasons and the signed decision (docs/authzen.md)." },
  },
} as const;
const requestId: Json = {
  name: "x-request-id",
  in: "header",
  required: false,
  description: "Echoed on the answer; a retry with the same id from the same key replays the first answer.",
  schema: { type: "string", maxLength: 240 },
} as const;
const problem: Json = {
  description: "An RFC 9457 problem; no decision",
  content: { "application/problem+json": { schema: { type: "object" } } },
} as const;

const ROLES_TEXT = "Roles: `agent` (its own agent only) and `enforcer` (the agents its key lists).";

function post(operationId: string, summary: string, request: Json, answer: Json): Json {
  return {
    operationId,
    summary,
    description: ROLES_TEXT,
    security: [{ bearer: [] }, { apiKey: [] }],
    parameters: [requestId],
    requestBody: { required: true, content: { "application/json": { schema: request } } },
    responses: {
      "200": { description: "The decision", content: { "application/json": { schema: answer } } },
      "400": problem,
      "401": problem,
      "413": problem,
      "415": problem,
      "422": problem,
    },
  };
}

/** The AuthZEN path items, each with the origin (`serverUrl` without `/v1`) as its server. */
export function authzenPaths(serverUrl: string): { [path: string]: Json } {
  const servers: Json = [{ url: serverUrl.endsWith("/v1") ? serverUrl.slice(0, -"/v1".length) : serverUrl }];
  const evaluation: Json = {
    type: "object",
    required: ["subject", "action", "resource"],
    properties: { subject: entity, action, resource: entity, context: { type: "object" } },
  };
  const evaluations: Json = {
    type: "object",
    properties: {
      subject: entity,
      action,
      resource: entity,
      context: { type: "object" },
      evaluations: { type: "array", maxItems: 64, items: { type: "object" } },
      options: {
        type: "object",
        properties: { evaluations_semantic: { enum: ["execute_all", "deny_on_first_deny", "permit_on_first_permit"] } },
      },
    },
  };
  return {
    ...searchPaths(servers),
    "/access/v1/evaluation": {
      servers,
      post: post("authzenEvaluation", "AuthZEN 1.0 access evaluation: one authorize decision", evaluation, decision),
    },
    "/access/v1/evaluations": {
      servers,
      post: post("authzenEvaluations", "AuthZEN 1.0 access evaluations: decisions in order", evaluations, {
        type: "object",
        required: ["evaluations"],
        properties: { evaluations: { type: "array", items: decision } },
      }),
    },
    "/.well-known/authzen-configuration": {
      servers,
      get: {
        operationId: "authzenConfiguration",
        summary: "AuthZEN 1.0 metadata: the decision point and each endpoint offered",
        description: "No key needed.",
        security: [],
        responses: {
          "200": {
            description: "The metadata",
            content: { "application/json": { schema: { type: "object", required: ["policy_decision_point"] } } },
          },
        },
      },
    },
  };
}

/** The AuthZEN search path items: subjects and actions (resource search is not offered). */
function searchPaths(servers: Json): { [path: string]: Json } {
  const page: Json = {
    type: "object",
    properties: { token: { type: "string" }, limit: { type: "integer", minimum: 0, maximum: 100, default: 50 } },
  };
  const searchAnswer = (item: Json): Json => ({
    type: "object",
    required: ["page", "results"],
    properties: {
      page: {
        type: "object",
        required: ["next_token"],
        properties: { next_token: { type: "string" }, count: { type: "integer" }, total: { type: "integer" } },
      },
      results: { type: "array", items: item },
    },
  });
  const subjectQuery: Json = {
    type: "object",
    required: ["subject", "action", "resource"],
    properties: {
      subject: { type: "object", required: ["type"], properties: { type: { type: "string" } } },
      action,
      resource: entity,
      context: { type: "object" },
      page,
    },
  };
  const actionQuery: Json = {
    type: "object",
    required: ["subject", "resource"],
    properties: { subject: entity, resource: entity, context: { type: "object" }, page },
  };
  return {
    "/access/v1/search/subject": {
      servers,
      post: post(
        "authzenSearchSubject",
        "AuthZEN 1.0 subject search: the agents the key speaks for that may take the action now (nothing is sealed)",
        subjectQuery,
        searchAnswer(entity),
      ),
    },
    "/access/v1/search/action": {
      servers,
      post: post(
        "authzenSearchAction",
        "AuthZEN 1.0 action search: the actions of the named grant the agent may take now (nothing is sealed)",
        actionQuery,
        searchAnswer(action),
      ),
    },
  };
}
