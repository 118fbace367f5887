// Copies the documentation pages the CLI's help names into the package (cli/docs/), so that an
// installed `authority` points at pages that exist. Run by `npm pack` and `npm publish` (prepack);
// the copies are not committed: docs/ at the repository's root is the one source.
import { copyFileSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The pages the help texts name; keep in step with SHIPPED_DOCS in src/docs-path.ts. */
const PAGES = ["cli.md", "lsp.md", "mcp-gateway.md", "operations.md"];
const from = new URL("../../docs/", import.meta.url);
const to = new URL("../docs/", import.meta.url);
mkdirSync(fileURLToPath(to), { recursive: true });
for (const page of PAGES) copyFileSync(fileURLToPath(new URL(page, from)), fileURLToPath(new URL(page, to)));
