// Agent manifests read from code: the tools an agent registers, their hash, and least-privilege comparison.
export {
  buildManifest,
  MANIFEST_LIMITS,
  type Manifest,
  type ManifestTool,
  type ManifestWarning,
  type ManifestWarningCode,
} from "./build.js";
export { compareManifest, grantedToolsOf, type ManifestComparison } from "./compare.js";
export { canonicalManifest, manifestHash, MANIFEST_VERSION, type ToolKind } from "./hash.js";
export { renderComparison, renderManifest } from "./render.js";
export type { RegistrationCall, SourceLocation } from "./registrations.js";
