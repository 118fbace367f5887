// OpenAI Agents SDK function tools decided before they run: `invoke` is wrapped, everything else of the tool is kept.
import { toolGovernor, undescribedRefusal, type GovernorClient, type ToolGovernanceOptions, type ToolGovernor } from "@agent-authority/sdk";
import type { Tool } from "@openai/agents";

/**
 * Wraps function tools: each call is decided as `<namespace>.<tool name>` by the authority server
 * before the tool's own `invoke` (its parsing, validation, error function and timeout) runs. A
 * refusal is the call's output, which the framework gives the model as JSON text. Only function
 * tools can be governed: hosted, computer, shell and apply-patch tools throw a TypeError, since
 * their calls do not run through `invoke`.
 */
export function governTools<Context>(
  authority: GovernorClient,
  options: ToolGovernanceOptions,
  tools: readonly Tool<Context>[],
): Tool<Context>[] {
  const governor = toolGovernor(authority, options);
  const names = new Set(tools.map((tool) => tool.name));
  for (const name of Object.keys(options.tools ?? {})) {
    if (!names.has(name)) throw new TypeError(`tools.${name}: no tool of that name in the list`);
  }
  return tools.map((tool) => wrap(governor, tool));
}

/** Wraps one function tool. */
export function governTool<Context>(authority: GovernorClient, options: ToolGovernanceOptions, tool: Tool<Context>): Tool<Context> {
  return wrap(toolGovernor(authority, options), tool);
}

function wrap<Context>(governor: ToolGovernor, tool: Tool<Context>): Tool<Context> {
  if (tool.type !== "function") throw new TypeError(`tool \`${tool.name}\` is a ${tool.type} tool; only function tools can be governed`);
  governor.actionOf(tool.name);
  const invoke = tool.invoke;
  return {
    ...tool,
    invoke: async (runContext, input, details) => {
      const args = parsedArgs(input);
      if (args === undefined) return undescribedRefusal(tool.name, "its arguments are not a JSON object");
      const call = await governor.call(tool.name, args, () => invoke(runContext, input, details), details?.signal);
      return call.ran ? call.value : call.refusal;
    },
  };
}

/** The call's arguments as the model sent them, or undefined when they are not a JSON object. */
function parsedArgs(input: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(input === "" ? "{}" : input);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
