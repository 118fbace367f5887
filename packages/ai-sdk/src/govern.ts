// Vercel AI SDK tools decided before they run: each `execute` is wrapped so a refusal reaches the model as the tool's result.
import { toolGovernor, type GovernorClient, type ToolGovernanceOptions, type ToolGovernor, type ToolRefusal } from "@agent-authority/sdk";
import type { Tool, ToolExecutionOptions, ToolSet } from "ai";

/** A tool whose calls are decided first: its output is the tool's own, or the refusal the model reads instead. */
export type GovernedTool<T> = T extends Tool<infer Input, infer Output> ? Tool<Input, Output | ToolRefusal> : T;

/** The tool set with every output widened by the refusal; a tool set typed only as `ToolSet` stays `ToolSet`. */
export type GovernedTools<TOOLS extends ToolSet> = string extends keyof TOOLS ? TOOLS : { [K in keyof TOOLS]: GovernedTool<TOOLS[K]> };

// The refusals this package made, so `toModelOutput` and `isRefusal` tell them from a tool's own output.
const refusals = new WeakSet<object>();

/** True when a tool result is a refusal made here rather than the tool's own output. */
export function isRefusal(value: unknown): value is ToolRefusal {
  return typeof value === "object" && value !== null && refusals.has(value);
}

/**
 * Wraps every tool of a tool set that has an `execute`: the action `<namespace>.<key>` is decided by
 * the authority server before it runs. Tools without `execute` (their calls return to your code)
 * and provider-executed tools are passed through unchanged: nothing here runs them.
 */
export function governTools<TOOLS extends ToolSet>(
  authority: GovernorClient,
  options: ToolGovernanceOptions,
  tools: TOOLS,
): GovernedTools<TOOLS> {
  const governor = toolGovernor(authority, options);
  for (const name of Object.keys(options.tools ?? {})) {
    if (!Object.hasOwn(tools, name)) throw new TypeError(`tools.${name}: no tool of that name in the tool set`);
  }
  const governed: Record<string, unknown> = {};
  for (const [name, tool] of Object.entries(tools)) governed[name] = wrap(governor, name, tool);
  return governed as GovernedTools<TOOLS>;
}

/** Wraps one tool, decided as `<namespace>.<name>`; `name` is the key the tool has in the tool set. */
export function governTool<T extends ToolSet[string]>(
  authority: GovernorClient,
  options: ToolGovernanceOptions,
  name: string,
  tool: T,
): GovernedTool<T> {
  return wrap(toolGovernor(authority, options), name, tool) as GovernedTool<T>;
}

function wrap(governor: ToolGovernor, name: string, tool: ToolSet[string]): unknown {
  const execute = tool.execute;
  if (typeof execute !== "function") return tool;
  governor.actionOf(name);
  const toModelOutput = (tool as { toModelOutput?: (options: { output: unknown }) => unknown }).toModelOutput;
  return {
    ...tool,
    execute: async (input: unknown, callOptions: ToolExecutionOptions): Promise<unknown> => {
      const call = await governor.call(name, input, () => finalValue(execute(input as never, callOptions)), callOptions.abortSignal);
      if (call.ran) return call.value;
      refusals.add(call.refusal);
      return call.refusal;
    },
    ...(toModelOutput === undefined
      ? {}
      : {
          toModelOutput: (options: { output: unknown }) =>
            isRefusal(options.output) ? { type: "json", value: options.output } : toModelOutput(options),
        }),
  };
}

/** The tool's result; a streaming tool's preliminary results are read through and its last one is the result. */
async function finalValue(result: unknown): Promise<unknown> {
  if (typeof result !== "object" || result === null || !(Symbol.asyncIterator in result)) return result;
  let last: unknown;
  for await (const value of result as AsyncIterable<unknown>) last = value;
  return last;
}
