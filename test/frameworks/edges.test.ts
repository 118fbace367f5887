// What docs/frameworks.md promises at the edges of each adapter: what passes through, what is refused when wrapping, what a refusal looks like.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunContext, tool as agentTool, webSearchTool } from "@openai/agents";
import { ToolMessage } from "@langchain/core/messages";
import { tool as langchainTool } from "@langchain/core/tools";
import { generateText, stepCountIs, tool as aiTool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { governTools as governAi, isRefusal } from "@agent-authority/ai-sdk";
import { governTools as governLangChain } from "@agent-authority/langchain";
import { governTools as governAgents } from "@agent-authority/openai-agents";
import { startPlatform, type Platform } from "./platform.js";

let platform: Platform;
beforeAll(async () => {
  platform = await startPlatform();
});
afterAll(() => platform?.close());

const schema = z.object({ order: z.string() });
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const byOrder = { refund: { args: (args: Readonly<Record<string, unknown>>) => ({ order: args["order"] }) } };

function twoSteps(order: string): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: [
      {
        content: [{ type: "tool-call", toolCallId: "call-1", toolName: "refund", input: JSON.stringify({ order }) }],
        finishReason: { unified: "tool-calls", raw: undefined },
        usage,
        warnings: [],
      },
      { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] },
    ],
  });
}

describe("the AI SDK adapter", () => {
  it("passes a tool without execute through unchanged, and refuses a `tools` entry that names no tool", () => {
    const clientSide = aiTool({ inputSchema: schema });
    const governed = governAi(platform.agent, { grant: "grt_x", namespace: "shop" }, { ask: clientSide });
    expect(governed.ask).toBe(clientSide);
    expect(() =>
      governAi(
        platform.agent,
        { grant: "grt_x", namespace: "shop", tools: { refnud: {} } },
        { refund: aiTool({ inputSchema: schema, execute: async () => 1 }) },
      ),
    ).toThrow(/tools.refnud: no tool/);
  });

  it("reads a streaming tool to its last value, tells a refusal from a tool's output, and keeps a tool's toModelOutput to its own outputs", async () => {
    const grant = await platform.grant();
    const seen: unknown[] = [];
    const refund = aiTool({
      inputSchema: schema,
      async *execute({ order }) {
        yield { order, step: "started" };
        yield { order, step: "done" };
      },
      toModelOutput: ({ output }) => {
        seen.push(output);
        return { type: "text", value: `refunded ${output.order}` };
      },
    });
    const tools = governAi(platform.agent, { grant: grant.id, namespace: "shop", tools: byOrder }, { refund });
    const allowed = await generateText({ model: twoSteps("o-1"), tools, stopWhen: stepCountIs(3), prompt: "go" });
    expect(allowed.steps[0]?.toolResults[0]?.output).toEqual({ order: "o-1", step: "done" });
    const refused = await generateText({ model: twoSteps("blocked"), tools, stopWhen: stepCountIs(3), prompt: "go" });
    const output = refused.steps[0]?.toolResults[0]?.output;
    expect(isRefusal(output)).toBe(true);
    expect(isRefusal({ ...(output as object) })).toBe(false);
    expect(seen.every((value) => !isRefusal(value))).toBe(true);
    expect(seen).toContainEqual({ order: "o-1", step: "done" });
  });
});

describe("the OpenAI Agents SDK adapter", () => {
  it("refuses to wrap a hosted tool, and refuses without a decision a call whose arguments are not a JSON object", async () => {
    const grant = await platform.grant();
    expect(() => governAgents(platform.agent, { grant: grant.id, namespace: "shop" }, [webSearchTool()])).toThrow(/only function tools/);
    let runs = 0;
    const [refund] = governAgents(platform.agent, { grant: grant.id, namespace: "shop" }, [
      agentTool({ name: "refund", description: "refund", parameters: schema, execute: async () => ++runs }),
    ]);
    if (refund?.type !== "function") throw new Error("not a function tool");
    for (const input of ["[1]", "not json", "null"]) {
      expect(await refund.invoke(new RunContext(), input), input).toMatchObject({ refused: true, ledger_id: null });
    }
    expect(runs).toBe(0);
    expect(await platform.ledger(grant.id)).toEqual([]);
  });

  it("names the server's problem code in `reason_code` when a 4xx refuses the request itself", async () => {
    let runs = 0;
    const [refund] = governAgents(platform.agent, { grant: "grt_not-an-id", namespace: "shop" }, [
      agentTool({ name: "refund", description: "refund", parameters: schema, execute: async () => ++runs }),
    ]);
    if (refund?.type !== "function") throw new Error("not a function tool");
    expect(await refund.invoke(new RunContext(), JSON.stringify({ order: "o-1" }))).toMatchObject({
      refused: true,
      ledger_id: null,
      reason_code: "invalid_body",
    });
    expect(runs).toBe(0);
  });
});

describe("the LangChain adapter", () => {
  it("gives a content-and-artifact tool a refusal as its content and no artifact, and keeps the tool's name and schema", async () => {
    const grant = await platform.grant();
    const refund = langchainTool(async ({ order }) => [`refunded ${order}`, { order }], {
      name: "refund",
      description: "refund",
      schema,
      responseFormat: "content_and_artifact",
    });
    const [governed] = governLangChain(platform.agent, { grant: grant.id, namespace: "shop", tools: byOrder }, [refund]);
    expect([governed!.name, governed!.description, governed!.schema]).toEqual([refund.name, refund.description, refund.schema]);
    const allowed = await governed!.invoke({ name: "refund", args: { order: "o-1" }, id: "call-1", type: "tool_call" });
    expect(allowed).toBeInstanceOf(ToolMessage);
    expect([allowed.content, allowed.artifact]).toEqual(["refunded o-1", { order: "o-1" }]);
    const refused = await governed!.invoke({ name: "refund", args: { order: "blocked" }, id: "call-2", type: "tool_call" });
    expect(JSON.parse(String(refused.content))).toMatchObject({ refused: true, outcome: "deny", gate: "policy" });
    expect(refused.artifact).toBeUndefined();
  });
});
