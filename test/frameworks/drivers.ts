// Each framework's own agent loop with its own test model: the model calls one tool once, then answers; we keep what it received.
import { Agent, Runner, Usage, tool as agentTool, type Model, type ModelRequest, type ModelResponse } from "@openai/agents";
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool as langchainTool } from "@langchain/core/tools";
import { generateText, stepCountIs, tool as aiTool, type ToolSet } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { createAgent } from "langchain";
import { z } from "zod";
import type { GovernorClient, ToolGovernanceOptions } from "@agent-authority/sdk";
import { governTools as governAiTools } from "@agent-authority/ai-sdk";
import { governTools as governLangChainTools } from "@agent-authority/langchain";
import { governTools as governAgentTools } from "@agent-authority/openai-agents";

/** The arguments every test tool takes. */
export interface ToolArgs {
  readonly order: string;
  readonly amount_minor: number;
}

/** A framework-neutral test tool: each driver makes it a tool of its framework. */
export interface TestTool {
  readonly name: string;
  readonly run: (args: ToolArgs) => unknown;
}

export interface ToolCallScript {
  readonly tool: string;
  readonly args: ToolArgs;
}

/** Tools of one framework, governed once as an application does at its start. */
export type Governed = (call: ToolCallScript) => Promise<unknown>;

export interface Driver {
  readonly framework: string;
  /** Governs `tools`; each run of the answer is the framework's agent loop, answering what the model received as the call's result. */
  govern(authority: GovernorClient, options: ToolGovernanceOptions, tools: readonly TestTool[]): Governed;
}

/** Governs and runs once. */
export function runOnce(
  driver: Driver,
  authority: GovernorClient,
  options: ToolGovernanceOptions,
  tools: readonly TestTool[],
  call: ToolCallScript,
): Promise<unknown> {
  return driver.govern(authority, options, tools)(call);
}

const argsSchema = z.object({ order: z.string(), amount_minor: z.number().int() });

/** A tool result as the model read it: JSON text is parsed, anything else is kept. */
function read(value: unknown): unknown {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

const usageV3 = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

export const aiSdkDriver: Driver = {
  framework: "Vercel AI SDK",
  govern(authority, options, tools) {
    const native: ToolSet = {};
    for (const t of tools) native[t.name] = aiTool({ description: t.name, inputSchema: argsSchema, execute: async (args) => t.run(args) });
    const governed = governAiTools(authority, options, native);
    return async (call) => {
      let received: unknown = "nothing";
      const model = new MockLanguageModelV3({
        doGenerate: async ({ prompt }) => {
          const last = prompt.at(-1);
          if (last?.role !== "tool") {
            return {
              content: [{ type: "tool-call", toolCallId: "call-1", toolName: call.tool, input: JSON.stringify(call.args) }],
              finishReason: { unified: "tool-calls", raw: undefined },
              usage: usageV3,
              warnings: [],
            };
          }
          const part = last.content.find((entry) => entry.type === "tool-result");
          received = part?.type === "tool-result" && "value" in part.output ? read(part.output.value) : part;
          return {
            content: [{ type: "text", text: "done" }],
            finishReason: { unified: "stop", raw: undefined },
            usage: usageV3,
            warnings: [],
          };
        },
      });
      const result = await generateText({ model, tools: governed, stopWhen: stepCountIs(3), prompt: "go" });
      if (result.text !== "done") throw new Error(`the loop ended with \`${result.text}\``);
      return received;
    };
  },
};

/** A model of the Agents SDK's Model interface: one function call, then a final message. */
class ScriptedModel implements Model {
  received: unknown = "nothing";
  constructor(private readonly call: ToolCallScript) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const input = Array.isArray(request.input) ? request.input : [];
    const result = input.find((item) => item.type === "function_call_result");
    if (result === undefined || result.type !== "function_call_result") {
      return {
        usage: new Usage(),
        output: [
          { type: "function_call", callId: "call-1", name: this.call.tool, arguments: JSON.stringify(this.call.args), status: "completed" },
        ],
      };
    }
    const output = result.output;
    this.received = read(typeof output === "string" ? output : "text" in output ? output.text : output);
    return {
      usage: new Usage(),
      output: [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "done" }] }],
    };
  }

  /** The agent loops here never stream. */
  getStreamedResponse(): AsyncIterable<never> {
    throw new Error("the scripted model does not stream");
  }
}

export const openAiAgentsDriver: Driver = {
  framework: "OpenAI Agents SDK",
  govern(authority, options, tools) {
    const native = tools.map((t) =>
      agentTool({ name: t.name, description: t.name, parameters: argsSchema, execute: async (args) => t.run(args) }),
    );
    const governed = governAgentTools(authority, options, native);
    return async (call) => {
      const model = new ScriptedModel(call);
      const agent = new Agent({ name: "shop", instructions: "help", model, tools: governed });
      const result = await new Runner({ tracingDisabled: true }).run(agent, "go");
      if (result.finalOutput !== "done") throw new Error(`the loop ended with \`${String(result.finalOutput)}\``);
      return model.received;
    };
  },
};

export const langChainDriver: Driver = {
  framework: "LangChain.js",
  govern(authority, options, tools) {
    const native = tools.map((t) =>
      langchainTool(async (args: ToolArgs) => t.run(args), { name: t.name, description: t.name, schema: argsSchema }),
    );
    const governed = governLangChainTools(authority, options, native);
    return async (call) => {
      let received: unknown = "nothing";
      const model = fakeModel()
        .respondWithTools([{ name: call.tool, args: { ...call.args }, id: "call-1" }])
        .respond((messages: BaseMessage[]) => {
          const last = messages.at(-1);
          received = last instanceof ToolMessage ? read(last.content) : last;
          return new AIMessage("done");
        });
      const agent = createAgent({ model, tools: governed });
      const result = await agent.invoke({ messages: [{ role: "user", content: "go" }] });
      const final = result.messages.at(-1);
      if (final?.content !== "done") throw new Error(`the loop ended with \`${JSON.stringify(final?.content)}\``);
      return received;
    };
  },
};
