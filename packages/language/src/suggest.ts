// "Did you mean" help: the closest known name by edit distance.

/** Levenshtein distance between `a` and `b`, stopping early once it exceeds `max`. */
export function editDistance(a: string, b: string, max = Infinity): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      current.push(value);
      if (value < rowMin) rowMin = value;
    }
    if (rowMin > max) return max + 1;
    previous = current;
  }
  return previous[b.length]!;
}

/** The candidate closest to `name` within a distance of a third of its length (at least 1, at most 3). */
export function closest(name: string, candidates: readonly string[]): string | undefined {
  const max = Math.min(3, Math.max(1, Math.floor(name.length / 3)));
  let best: string | undefined;
  let bestDistance = max + 1;
  for (const candidate of candidates) {
    const folded = candidate.toLowerCase() === name.toLowerCase() ? 0 : editDistance(name, candidate, max);
    if (folded < bestDistance) {
      best = candidate;
      bestDistance = folded;
    }
  }
  return best;
}

export function didYouMean(name: string, candidates: readonly string[]): string | undefined {
  const best = closest(name, candidates);
  return best === undefined ? undefined : `did you mean \`${best}\`?`;
}
