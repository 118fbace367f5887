// Public face of this package: named re-exports only.
export { governTool, governTools } from "./govern.js";
export type { ToolActionOptions, ToolDecisionEvent, ToolGovernanceOptions, ToolRefusal } from "@agent-authority/sdk";
