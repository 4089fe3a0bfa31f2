import { median, round } from './stats.js';

/**
 * The order the two sides of an A/B run in round `round`: A then B in even rounds, B then A in odd
 * ones (A B B A A B …), so a drift of the machine during a run (a neighbour starting, caches
 * warming) does not favour the side that always goes second.
 */
export function sidesInRound<T>(round: number, a: T, b: T): [T, T] {
  return round % 2 === 0 ? [a, b] : [b, a];
}

/**
 * Runs the measured side and its baseline in turn, `rounds` times, in the order `sidesInRound`
 * gives, so a noisy neighbour on a shared machine slows both rather than one. The first round of
 * each side may warm up.
 */
export async function interleaved<T>(
  rounds: number,
  measured: (round: number) => Promise<T>,
  baseline: (round: number) => Promise<T>,
): Promise<{ measured: T[]; baseline: T[] }> {
  const results = { measured: [] as T[], baseline: [] as T[] };
  for (let r = 0; r < rounds; r++) {
    for (const side of sidesInRound(r, 'measured' as const, 'baseline' as const)) {
      results[side].push(await (side === 'measured' ? measured : baseline)(r));
    }
  }
  return results;
}

/**
 * B against A round by round, for a cost (lower is better): the median of B ÷ A over the rounds
 * and in how many rounds B cost less. A pair is measured minutes apart at most, so its ratio moves
 * less with the machine's load than either median does.
 */
export function pairedSummary(a: readonly number[], b: readonly number[]): string {
  const pairs = Math.min(a.length, b.length);
  const ratios: number[] = [];
  let bLower = 0;
  for (let i = 0; i < pairs; i++) {
    ratios.push((b[i] as number) / (a[i] as number));
    if ((b[i] as number) < (a[i] as number)) bLower++;
  }
  return `B ÷ A per round: median ${round(median(ratios), 3)}, B lower in ${bLower} of ${pairs} rounds`;
}

/** The verdict of several runs: each run's B ÷ A (its medians), and their median. */
export function runsVerdict(ratios: readonly number[]): string {
  return `per run: ${ratios.map((ratio) => round(ratio, 3)).join(', ')}; median ${round(median(ratios), 3)}`;
}
