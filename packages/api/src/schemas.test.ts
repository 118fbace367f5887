// The contract itself: every schema compiles under ajv's strict mode, the request schemas refuse
// unknown fields at every level, and the OpenAPI document references only schemas it defines.

import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { ENDPOINTS, PROBLEM_CODES, allSchemas, buildOpenApiDocument, grantIssueBodySchema, requestSchemas } from "./index.js";

/**
 * Nodes that define properties and so must close the object. Not counted: an `if` condition (it
 * tests a value, it admits nothing), a node whose properties are all `true` (it only declares the
 * names a `required` next to it may use), and a node every one of whose `allOf` branches closes the
 * object in its `then` (a family parameter: one closed shape per `type`).
 */
function objectsWithProperties(schema: unknown, path = "#"): Array<{ path: string; node: Record<string, unknown> }> {
  if (schema === null || typeof schema !== "object") return [];
  const node = schema as Record<string, unknown>;
  const properties = node["properties"] as Record<string, unknown> | undefined;
  const declaresOnly = properties !== undefined && Object.values(properties).every((p) => p === true);
  const allOf = node["allOf"] as Array<{ then?: Record<string, unknown> }> | undefined;
  const closedByBranches = allOf?.every((b) => b["then"]?.["additionalProperties"] === false) === true;
  const counted = properties !== undefined && !path.endsWith("/if") && !declaresOnly && !closedByBranches;
  const here = counted ? [{ path, node }] : [];
  return [...here, ...Object.entries(node).flatMap(([k, v]) => objectsWithProperties(v, `${path}/${k}`))];
}

describe("@agent-authority/api", () => {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  for (const schema of allSchemas) ajv.addSchema(schema);

  it("compiles every schema in strict mode", () => {
    for (const schema of allSchemas) expect(ajv.getSchema(schema.$id), schema.$id).toBeDefined();
  });

  it("refuses unknown fields at every level of every request body", () => {
    for (const [name, schema] of Object.entries(requestSchemas)) {
      for (const { path, node } of objectsWithProperties(schema)) {
        expect(node["additionalProperties"], `${name} ${path}`).toBe(false);
      }
    }
  });

  it("accepts the smallest issue body and refuses an unknown field", () => {
    const validate = ajv.getSchema(grantIssueBodySchema.$id)!;
    const body = { agent_id: "agt_01m80w01d1rqfe1sry10fd9b83", principal_type: "team", principal_id: "ops", scope: { tool: ["a.b"] } };
    expect(validate(body)).toBe(true);
    expect(validate({ ...body, extra: 1 })).toBe(false);
  });

  it("builds an OpenAPI 3.1 document whose references all resolve", () => {
    const doc = buildOpenApiDocument() as {
      openapi: string;
      components: { schemas: Record<string, unknown> };
      paths: Record<string, unknown>;
    };
    expect(doc.openapi).toBe("3.1.0");
    const refs = JSON.stringify(doc).match(/#\/components\/schemas\/[A-Za-z]+/g) ?? [];
    for (const ref of refs) expect(doc.components.schemas[ref.split("/").at(-1)!], ref).toBeDefined();
    // The v1 table's paths, and the five AuthZEN paths served beside v1 at the origin (no resource search).
    expect(Object.keys(doc.paths)).toHaveLength(new Set(ENDPOINTS.map((e) => e.path)).size + 5);
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        "/access/v1/evaluation",
        "/access/v1/evaluations",
        "/access/v1/search/subject",
        "/access/v1/search/action",
        "/.well-known/authzen-configuration",
      ]),
    );
  });

  it("gives every problem code a status in the 4xx or 5xx range", () => {
    for (const [code, { status }] of Object.entries(PROBLEM_CODES)) expect(status >= 400 && status < 600, code).toBe(true);
  });
});
