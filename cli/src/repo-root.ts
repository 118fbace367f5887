// The repository root a report's paths are relative to: the nearest directory holding `.git`.
import { existsSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";

/** The nearest ancestor of `from` (itself included) that holds `.git`, else `from` itself. */
export function repositoryRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, ".git"))) return dir;
    if (dirname(dir) === dir) return from;
  }
}

/** `absolute` relative to `root`, with `/` separators and each segment percent-encoded, as a URI reference. */
export function relativeUri(root: string, absolute: string): string {
  return relative(root, absolute).split(sep).map(encodeURIComponent).join("/");
}
