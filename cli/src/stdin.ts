// Reading standard input for `-` arguments, bounded: a larger input is refused, never read on.
import { UsageError } from "./args.js";

/** The most bytes read from stdin: above a family's source limit (256 KiB), with room to spare. */
export const STDIN_BYTES_MAX = 1024 * 1024;

/** All of stdin as UTF-8 text, or a usage error as soon as it passes `max` bytes. */
export async function readStdin(input: AsyncIterable<Buffer | string> = process.stdin, max = STDIN_BYTES_MAX): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of input) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    total += bytes.length;
    if (total > max) throw new UsageError(`standard input is longer than ${max} bytes`);
    chunks.push(bytes);
  }
  return Buffer.concat(chunks).toString("utf8");
}
