/**
 * What every benchmark shares: command-line options, the repository root, package versions for
 * the report, and the statistics of samples.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** A numeric `--name=value` option; positive unless `allowZero`. */
export function option(name: string, fallback: number, allowZero = false): number {
  const prefix = `--${name}=`;
  const given = process.argv.find((arg) => arg.startsWith(prefix));
  if (given === undefined) return fallback;
  const value = Number(given.slice(prefix.length));
  if (!Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new Error(`--${name} needs a ${allowZero ? 'non-negative' : 'positive'} number`);
  }
  return value;
}

/** The folder holding package.json, walking up from `start` (compiled benchmarks run from out/). */
export function findRepoRoot(start: string): string {
  let dir = start;
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('no package.json above the benchmark');
    dir = parent;
  }
}

/** `name@version` of an installed package, for the report. */
export function packageVersion(repoRoot: string, name: string): string {
  const manifest = JSON.parse(readFileSync(join(repoRoot, 'node_modules', name, 'package.json'), 'utf8')) as { version: string };
  return `${name}@${manifest.version}`;
}

export interface Stats {
  median: number;
  min: number;
  max: number;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function stats(values: readonly number[]): Stats {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}
