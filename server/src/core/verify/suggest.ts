/**
 * "Did you mean …?" for names: the one candidate close enough to a name to be a typo of it.
 *
 * The distance is Levenshtein's (the `leven` package), compared case-insensitively, so
 * `Memory` finds `memory`. A suggestion is made only when it is unambiguous: exactly one
 * candidate at the smallest distance, and that distance at most 2 and at most a third of the
 * name's length (at least 1), so that short names do not "match" unrelated short names.
 */
import leven from 'leven';

/** The largest distance at which a candidate still counts as a typo of a name of this length. */
export function typoLimit(length: number): number {
  return Math.min(2, Math.max(1, Math.floor(length / 3)));
}

/** The unique closest candidate within {@link typoLimit}, or undefined. `name` itself is never suggested. */
export function closestName(name: string, candidates: Iterable<string>): string | undefined {
  const limit = typoLimit(name.length);
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  let tied = false;
  for (const candidate of new Set(candidates)) {
    if (candidate === name) continue;
    const distance = leven(lower, candidate.toLowerCase());
    if (distance > limit) continue;
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
      tied = false;
    } else if (distance === bestDistance) {
      tied = true;
    }
  }
  return tied ? undefined : best;
}
