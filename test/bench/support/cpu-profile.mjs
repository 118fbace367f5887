// Reads a V8 CPU profile (`node --cpu-prof`) and sums its samples by where they were spent, so that
// a benchmark can print shares by kind of work rather than leave a file to open in a browser.
//
// A sample counts for the function it was taken in. A sample in native code that V8 names no script
// for (JSON.parse, a hash's digest) counts for the nearest caller that has one, so that it lands in
// the category of the code that asked for it; the names in `NATIVE` keep their own category.
import { readFileSync } from "node:fs";

/** Native functions counted as their own kind of work, whoever called them. */
const NATIVE = new Map([
  ["writeUtf8String", "write system calls"],
  ["writeBuffer", "write system calls"],
  ["writev", "write system calls"],
  ["(garbage collector)", "garbage collection"],
  ["(program)", "V8 and Node's native code"],
]);

/**
 * The category of a script, by its URL; `rules` is a list of [test, category], first match wins.
 * Answers undefined for a frame with no URL (native code), which takes its caller's.
 */
function categoryOf(frame, rules) {
  const named = NATIVE.get(frame.functionName);
  if (named !== undefined) return named;
  if (frame.url === "") return undefined;
  for (const [test, category] of rules) if (test(frame)) return category;
  return "other";
}

/**
 * Milliseconds of samples per category in the profile at `file`, idle left out; `rules` as for
 * `categoryOf`. Answers the categories, largest first, with the busy total.
 */
export function profileShares(file, rules) {
  const profile = JSON.parse(readFileSync(file, "utf8"));
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const resolved = new Map();
  const categoryOfNode = (id) => {
    let category = resolved.get(id);
    if (category !== undefined) return category;
    for (let at = id; at !== undefined && category === undefined; at = parents.get(at))
      category = categoryOf(nodes.get(at).callFrame, rules);
    category ??= "V8 and Node's native code";
    resolved.set(id, category);
    return category;
  };
  const totals = new Map();
  let busy = 0;
  for (let i = 0; i < profile.samples.length; i += 1) {
    const id = profile.samples[i];
    if (nodes.get(id).callFrame.functionName === "(idle)") continue;
    const us = profile.timeDeltas[i] ?? 0;
    const category = categoryOfNode(id);
    totals.set(category, (totals.get(category) ?? 0) + us);
    busy += us;
  }
  const shares = [...totals].map(([category, us]) => ({ category, ms: us / 1000 })).sort((a, b) => b.ms - a.ms);
  return { busyMs: busy / 1000, shares };
}
