/**
 * Runs the measured side and its baseline alternately, `rounds` times (A B A B …), so a noisy
 * neighbour on a shared machine slows both rather than one. The first round of each side may warm up.
 */
export async function interleaved<T>(
  rounds: number,
  measured: (round: number) => Promise<T>,
  baseline: (round: number) => Promise<T>,
): Promise<{ measured: T[]; baseline: T[] }> {
  const results = { measured: [] as T[], baseline: [] as T[] };
  for (let round = 0; round < rounds; round++) {
    results.measured.push(await measured(round));
    results.baseline.push(await baseline(round));
  }
  return results;
}
