// Public face of the analysis package: named re-exports only.
export { ANALYSIS_LIMITS } from "./limits.js";
export { createAnalyzer, type Analyzer } from "./solver.js";
