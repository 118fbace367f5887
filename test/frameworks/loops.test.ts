// The other loops the docs name: the AI SDK's streamText and ToolLoopAgent, LangGraph's ToolNode, and the Agents SDK's own approval kept.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent, Runner, Usage, tool as agentTool, type Model } from "@openai/agents";
import { AIMessage, type ToolMessage } from "@langchain/core/messages";
import { tool as langchainTool } from "@langchain/core/tools";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { simulateReadableStream, stepCountIs, streamText, tool as aiTool, ToolLoopAgent } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { z } from "zod";
import type { ToolGovernanceOptions } from "@agent-authority/sdk";
import { governTools as governAi } from "@agent-authority/ai-sdk";
import { governTools as governLangChain } from "@agent-authority/langchain";
import { governTools as governAgents } from "@agent-authority/openai-agents";
import { startPlatform, type Platform } from "./platform.js";

let platform: Platform;
beforeAll(async () => {
  platform = await startPlatform();
});
afterAll(() => platform?.close());

const schema = z.object({ order: z.string(), amount_minor: z.number().int() });
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const options = (grant: string): ToolGovernanceOptions => ({
  grant,
  namespace: "shop",
  tools: { refund: { args: (args) => ({ order: args["order"] }) } },
});

function counted(): { runs: number; execute: (args: { order: string }) => Promise<{ order: string }> } {
  const state = {
    runs: 0,
    execute: async ({ order }: { order: string }) => {
      state.runs += 1;
      return { order };
    },
  };
  return state;
}

describe("the AI SDK's other loops", () => {
  it("streamText runs an allowed call and hands a refusal to the model", async () => {
    const grant = await platform.grant();
    const tool = counted();
    const tools = governAi(platform.agent, options(grant.id), { refund: aiTool({ inputSchema: schema, execute: tool.execute }) });
    for (const [order, expected] of [
      ["o-1", { order: "o-1" }],
      ["blocked", { refused: true, outcome: "deny", gate: "policy" }],
    ] as const) {
      const model = new MockLanguageModelV3({
        doStream: async ({ prompt }) => ({
          stream: simulateReadableStream<LanguageModelV3StreamPart>({
            chunks:
              prompt.at(-1)?.role === "tool"
                ? [
                    { type: "text-start", id: "t" },
                    { type: "text-delta", id: "t", delta: "done" },
                    { type: "text-end", id: "t" },
                    { type: "finish", finishReason: { unified: "stop", raw: undefined }, usage },
                  ]
                : [
                    { type: "tool-call", toolCallId: "call-1", toolName: "refund", input: JSON.stringify({ order, amount_minor: 10 }) },
                    { type: "finish", finishReason: { unified: "tool-calls", raw: undefined }, usage },
                  ],
          }),
        }),
      });
      const result = streamText({ model, tools, stopWhen: stepCountIs(3), prompt: "go" });
      expect(await result.text).toBe("done");
      expect((await result.steps)[0]?.toolResults[0]?.output).toMatchObject(expected);
    }
    expect(tool.runs).toBe(1);
    expect((await platform.ledger(grant.id)).map((record) => record.outcome)).toEqual(["allow", "deny"]);
  });

  it("a ToolLoopAgent takes the same wrapped tools", async () => {
    const grant = await platform.grant();
    const tool = counted();
    const model = new MockLanguageModelV3({
      doGenerate: [
        {
          content: [
            { type: "tool-call", toolCallId: "call-1", toolName: "refund", input: JSON.stringify({ order: "blocked", amount_minor: 10 }) },
          ],
          finishReason: { unified: "tool-calls", raw: undefined },
          usage,
          warnings: [],
        },
        { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] },
      ],
    });
    const agent = new ToolLoopAgent({
      model,
      tools: governAi(platform.agent, options(grant.id), { refund: aiTool({ inputSchema: schema, execute: tool.execute }) }),
    });
    const result = await agent.generate({ prompt: "go" });
    expect(result.steps[0]?.toolResults[0]?.output).toMatchObject({ refused: true, outcome: "deny", gate: "policy" });
    expect(tool.runs).toBe(0);
  });
});

describe("LangGraph's ToolNode", () => {
  it("runs the wrapped tools: an allowed call once, a refused one never", async () => {
    const grant = await platform.grant();
    const tool = counted();
    const node = new ToolNode(
      governLangChain(platform.agent, options(grant.id), [langchainTool(tool.execute, { name: "refund", description: "refund", schema })]),
    );
    const call = (order: string): AIMessage =>
      new AIMessage({
        content: "",
        tool_calls: [{ name: "refund", args: { order, amount_minor: 10 }, id: `call-${order}`, type: "tool_call" }],
      });
    const allowed = (await node.invoke({ messages: [call("o-1")] })) as { messages: ToolMessage[] };
    expect(JSON.parse(String(allowed.messages[0]!.content))).toEqual({ order: "o-1" });
    const refused = (await node.invoke({ messages: [call("blocked")] })) as { messages: ToolMessage[] };
    expect(JSON.parse(String(refused.messages[0]!.content))).toMatchObject({ refused: true, outcome: "deny", gate: "policy" });
    expect(tool.runs).toBe(1);
  });
});

describe("the Agents SDK's own approval", () => {
  it("still interrupts the run before anything is decided: the framework's semantics come first", async () => {
    const grant = await platform.grant();
    const tool = counted();
    const model: Model = {
      getResponse: async () => ({
        usage: new Usage(),
        output: [
          {
            type: "function_call",
            callId: "call-1",
            name: "refund",
            arguments: JSON.stringify({ order: "o-1", amount_minor: 10 }),
            status: "completed",
          },
        ],
      }),
      getStreamedResponse: () => {
        throw new Error("not streamed");
      },
    };
    const native = agentTool({ name: "refund", description: "refund", parameters: schema, needsApproval: true, execute: tool.execute });
    const agent = new Agent({ name: "shop", model, tools: governAgents(platform.agent, options(grant.id), [native]) });
    const result = await new Runner({ tracingDisabled: true }).run(agent, "go");
    expect(result.interruptions).toHaveLength(1);
    expect(tool.runs).toBe(0);
    expect(await platform.ledger(grant.id)).toEqual([]);
  });
});
