// One vitest configuration for the whole repository: workspace packages resolve to their sources.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const root = fileURLToPath(new URL("..", import.meta.url));
const source = (dir: string): string => `${root}${dir}/src/index.ts`;

export default defineConfig({
  root,
  resolve: {
    alias: {
      "@agent-authority/grammar": source("grammar"),
      "@agent-authority/api": source("packages/api"),
      "@agent-authority/language": source("packages/language"),
      "@agent-authority/analysis": source("packages/analysis"),
      "@agent-authority/lattice": source("packages/lattice"),
      "@agent-authority/engine": source("packages/engine"),
      "@agent-authority/families": source("packages/families"),
      "@agent-authority/sdk": source("packages/sdk"),
      "@agent-authority/gateway": source("packages/gateway"),
      "@agent-authority/ai-sdk": source("packages/ai-sdk"),
      "@agent-authority/openai-agents": source("packages/openai-agents"),
      "@agent-authority/langchain": source("packages/langchain"),
      "@agent-authority/lsp": source("packages/lsp"),
      "@agent-authority/server": source("server"),
    },
  },
  test: {
    include: [
      "grammar/src/**/*.test.ts",
      "packages/*/src/**/*.test.ts",
      "server/src/**/*.test.ts",
      "cli/src/**/*.test.ts",
      "test/**/*.test.ts",
    ],
    exclude: ["**/node_modules/**", "**/dist/**"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // vitest's default is one worker less than the cores: a single worker on a 2-core machine, while
    // most files wait on the servers, databases and browsers they start. Three keep both cores busy.
    maxWorkers: 3,
    // A worker keeps the modules it has loaded from one file to the next instead of loading the
    // sources again for each file (most of the suite's time): the packages hold no module state
    // (test/no-module-state.test.ts), and every file builds its own servers and stores.
    isolate: false,
  },
});
