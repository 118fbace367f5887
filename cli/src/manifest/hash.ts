// The manifest hash lives in the SDK, so the CLI and the MCP gateway hash a tool list the same way.
export { canonicalManifest, compareText, manifestHash, MANIFEST_VERSION, type ToolKind } from "@agent-authority/sdk";
