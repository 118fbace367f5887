// Where a documentation page the help texts name is on this machine: the copy shipped in the
// package (docs/ beside dist/, written when the package is packed), else the repository's docs/
// when `authority` runs from a checkout.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The pages the package ships; keep in step with scripts/copy-docs.mjs. */
export const SHIPPED_DOCS = Object.freeze(["cli.md", "lsp.md", "mcp-gateway.md", "operations.md"] as const);
export type ShippedDoc = (typeof SHIPPED_DOCS)[number];

/** The absolute path of the page, or `docs/<page>` when neither copy exists. */
export function docPath(page: ShippedDoc): string {
  for (const base of ["../docs/", "../../docs/"]) {
    const path = fileURLToPath(new URL(`${base}${page}`, import.meta.url));
    if (existsSync(path)) return path;
  }
  return `docs/${page}`;
}
