// A unified diff of a text and its formatted form, for `authority fmt --diff`.

const CONTEXT_LINES = 3;

/**
 * The unified diff (`--- a/path`, `+++ b/path`, one hunk) from `before` to `after`. The formatter
 * changes one contiguous region of a file (a policy, or a family's policy scalar), so the hunk is
 * the lines between the common leading and trailing lines, with three lines of context.
 */
export function unifiedDiff(path: string, before: string, after: string): string {
  if (before === after) return "";
  const a = splitLines(before);
  const b = splitLines(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail += 1;
  const from = Math.max(0, head - CONTEXT_LINES);
  const aEnd = Math.min(a.length, a.length - tail + CONTEXT_LINES);
  const bEnd = Math.min(b.length, b.length - tail + CONTEXT_LINES);
  const lines = [
    `--- a/${path}`,
    `+++ b/${path}`,
    `@@ -${range(from, aEnd - from)} +${range(from, bEnd - from)} @@`,
    ...a.slice(from, head).map((l) => ` ${l}`),
    ...a.slice(head, a.length - tail).map((l) => `-${l}`),
    ...b.slice(head, b.length - tail).map((l) => `+${l}`),
    ...a.slice(a.length - tail, aEnd).map((l) => ` ${l}`),
  ];
  return `${lines.join("\n")}\n`;
}

/** The lines of a text; a last line without a line break carries the marker `diff` prints for it. */
function splitLines(text: string): string[] {
  const parts = text.split("\n");
  if (parts.at(-1) === "") parts.pop();
  else parts[parts.length - 1] += "\n\\ No newline at end of file";
  return parts;
}

/** `start,count` of a hunk, 1-based; an empty side is `start,0` at the line before. */
function range(start: number, count: number): string {
  return count === 0 ? `${start},0` : `${start + 1},${count}`;
}
