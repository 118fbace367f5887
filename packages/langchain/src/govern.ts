// LangChain.js tools decided before they run: a view of each tool whose `_call` asks the authority server first.
import { toolGovernor, type GovernorClient, type ToolGovernanceOptions, type ToolGovernor } from "@agent-authority/sdk";
import type { StructuredToolInterface } from "@langchain/core/tools";

/**
 * Wraps LangChain tools (and so the tools of LangGraph's tool nodes and `createAgent`): each call is
 * decided as `<namespace>.<tool name>` after the tool validated its input and before it runs. The
 * governed tool is a view of the original: same name, description, schema, response format and
 * callbacks; only its run is decided first. A refusal is the tool's output, as JSON text.
 */
export function governTools<T extends StructuredToolInterface>(
  authority: GovernorClient,
  options: ToolGovernanceOptions,
  tools: readonly T[],
): T[] {
  const governor = toolGovernor(authority, options);
  const names = new Set(tools.map((tool) => tool.name));
  for (const name of Object.keys(options.tools ?? {})) {
    if (!names.has(name)) throw new TypeError(`tools.${name}: no tool of that name in the list`);
  }
  return tools.map((tool) => wrap(governor, tool));
}

/** Wraps one tool. */
export function governTool<T extends StructuredToolInterface>(authority: GovernorClient, options: ToolGovernanceOptions, tool: T): T {
  return wrap(toolGovernor(authority, options), tool);
}

type RunMethod = (this: unknown, args: unknown, ...rest: unknown[]) => Promise<unknown>;

function wrap<T extends StructuredToolInterface>(governor: ToolGovernor, tool: T): T {
  const run: unknown = Reflect.get(tool, "_call");
  if (typeof run !== "function")
    throw new TypeError(`tool \`${tool.name}\` has no \`_call\`; only LangChain tools (StructuredTool and its kinds) can be governed`);
  governor.actionOf(tool.name);
  // The view inherits every property of the tool; `call` still validates the input and reports to the callbacks.
  const governed = Object.create(tool) as T;
  Object.defineProperty(governed, "_call", {
    value: async (args: unknown, ...rest: unknown[]): Promise<unknown> => {
      const call = await governor.call(tool.name, args, () => (run as RunMethod).call(tool, args, ...rest), signalOf(rest[1]));
      if (call.ran) return call.value;
      const text = JSON.stringify(call.refusal);
      // A tool that answers content and artifact gets the refusal as content and no artifact.
      return Reflect.get(tool, "responseFormat") === "content_and_artifact" ? [text, undefined] : text;
    },
  });
  return governed;
}

/** The abort signal of the run's configuration, when it has one. */
function signalOf(config: unknown): AbortSignal | undefined {
  const signal: unknown = typeof config === "object" && config !== null ? Reflect.get(config, "signal") : undefined;
  return signal instanceof AbortSignal ? signal : undefined;
}
