// The gateway's own checks of tools/call against the MCP SDK's schemas, on random JSON: where a schema
// refuses, the gateway's check refuses too (a request is then left to the SDK, a result refused).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  JSONRPCErrorResponseSchema,
  JSONRPCRequestSchema,
  JSONRPCResultResponseSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { answerOf, checkedCallResult, hostCallOf } from "@agent-authority/gateway";

const json = fc.jsonValue({ maxDepth: 3 });
/** A value that is often of the right type and often not. */
const maybe = <T>(good: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: good, weight: 4 }, { arbitrary: json, weight: 1 }, { arbitrary: fc.constant(undefined), weight: 1 });
const id = fc.oneof(
  { arbitrary: fc.oneof(fc.string({ maxLength: 8 }), fc.integer()), weight: 4 },
  { arbitrary: fc.oneof(fc.constant(2 ** 60), fc.double(), fc.constant(null), json), weight: 1 },
);
const textBlock = fc.record(
  {
    type: maybe(fc.constant("text")),
    text: maybe(fc.string({ maxLength: 8 })),
    annotations: maybe(fc.object()),
    _meta: maybe(fc.object()),
  },
  { requiredKeys: [] },
);
const block = fc.oneof(textBlock, json, fc.record({ type: fc.constantFrom("image", "audio", "resource", "resource_link"), data: json }));

/** A host's tools/call line, each member right or wrong at random. */
const request = fc.record(
  {
    jsonrpc: maybe(fc.constant("2.0")),
    id,
    method: maybe(fc.constant("tools/call")),
    params: maybe(
      fc.record(
        {
          name: maybe(fc.string({ maxLength: 8 })),
          arguments: maybe(fc.dictionary(fc.string({ maxLength: 4 }), json, { maxKeys: 3 })),
          _meta: maybe(
            fc.record(
              {
                progressToken: maybe(fc.oneof(fc.string({ maxLength: 4 }), fc.integer())),
                "io.modelcontextprotocol/related-task": fc.oneof(json, fc.record({ taskId: fc.string() })),
              },
              { requiredKeys: [] },
            ),
          ),
        },
        { requiredKeys: [] },
      ),
    ),
  },
  { requiredKeys: ["jsonrpc", "id", "method"] },
);
/** Now and then a member a request does not have, or a task asked for. */
const oddRequest = fc.oneof(
  { arbitrary: request, weight: 4 },
  { arbitrary: fc.tuple(request, json).map(([line, extra]) => ({ ...line, extra })), weight: 1 },
  {
    arbitrary: fc.tuple(request, json).map(([line, task]) => ({ ...line, params: { ...(line.params as object), task } })),
    weight: 1,
  },
);

/** An upstream's tools/call result, each member right or wrong at random. */
const result = fc.oneof(
  fc.record(
    {
      content: maybe(fc.array(block, { maxLength: 3 })),
      isError: maybe(fc.boolean()),
      structuredContent: maybe(fc.dictionary(fc.string({ maxLength: 4 }), json, { maxKeys: 3 })),
      _meta: maybe(fc.record({ progressToken: json }, { requiredKeys: [] })),
      other: json,
    },
    { requiredKeys: [] },
  ),
  json,
);

/** JSON's own text of a value, as the value reaches the gateway (no undefined members, `__proto__` an own key). */
const asRead = (value: unknown): unknown => {
  const text = JSON.stringify(value);
  return text === undefined ? undefined : JSON.parse(text);
};

describe("the gateway's own checks of tools/call", () => {
  it("takes a host's request only where the SDK's request and tools/call schemas both accept it, reading the same fields", () => {
    let taken = 0;
    fc.assert(
      fc.property(fc.oneof({ arbitrary: oddRequest, weight: 4 }, { arbitrary: json, weight: 1 }), (raw) => {
        const message = asRead(raw);
        const call = hostCallOf(message);
        if (call === undefined) return;
        taken += 1;
        expect(JSONRPCRequestSchema.safeParse(message).success).toBe(true);
        const parsed = CallToolRequestSchema.safeParse(message);
        expect(parsed.success).toBe(true);
        expect(call.name).toBe(parsed.data!.params.name);
        expect(call.args).toEqual(parsed.data!.params.arguments ?? {});
        expect(call.progressToken).toBe(parsed.data!.params._meta?.progressToken);
        expect(call.id).toBe((message as { id: unknown }).id);
      }),
      { numRuns: 3_000 },
    );
    // The random requests reach the accepting side too, not only the refusals.
    expect(taken).toBeGreaterThan(10);
  });

  it("takes the usual request: the fast path is not empty", () => {
    const line = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "t", arguments: { a: 1 }, _meta: { progressToken: "p" } } };
    expect(hostCallOf(line)).toEqual({ id: 7, name: "t", args: { a: 1 }, progressToken: "p" });
    expect(hostCallOf({ ...line, id: 2 ** 60 })).toBeUndefined();
    expect(hostCallOf({ ...line, extra: 1 })).toBeUndefined();
    expect(hostCallOf({ ...line, params: { name: "t", task: {} } })).toBeUndefined();
  });

  it("accepts an upstream's result exactly where CallToolResultSchema does, answering its own object", () => {
    fc.assert(
      fc.property(result, (raw) => {
        const value = asRead(raw);
        const checked = checkedCallResult(value);
        const parsed = CallToolResultSchema.safeParse(value);
        expect(checked.ok).toBe(parsed.success);
        if (!checked.ok || !parsed.success) return;
        expect(checked.result.isError).toBe(parsed.data.isError);
        expect(checked.result.structuredContent).toEqual(parsed.data.structuredContent);
        // The upstream's own object, members the schema would drop included; a copy only to add `content: []`.
        if (Array.isArray((value as { content?: unknown }).content)) expect(checked.result).toBe(value);
        else expect(checked.result.content).toEqual([]);
      }),
      { numRuns: 3_000 },
    );
  });

  it("reads a response as a result or an error only where the SDK's response schemas accept it", () => {
    const response = fc.record(
      { jsonrpc: fc.constant("2.0"), id: fc.constant("gw-1"), result: maybe(fc.object()), error: maybe(json), extra: json },
      { requiredKeys: ["jsonrpc", "id"] },
    );
    fc.assert(
      fc.property(response, (raw) => {
        const message = asRead(raw) as Record<string, unknown>;
        const answer = answerOf(message);
        if (answer.kind === "result") expect(JSONRPCResultResponseSchema.safeParse(message).success).toBe(true);
        if (answer.kind === "error") expect(JSONRPCErrorResponseSchema.safeParse(message).success).toBe(true);
        if (answer.kind === "malformed")
          expect(JSONRPCResultResponseSchema.safeParse(message).success || JSONRPCErrorResponseSchema.safeParse(message).success).toBe(
            false,
          );
      }),
      { numRuns: 3_000 },
    );
  });
});
