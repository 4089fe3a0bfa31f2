/** Nearest-rank percentile (p in 0–100) of an ascending array; NaN when empty. */
export function percentileOfSorted(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] as number;
}

export function median(values: readonly number[]): number {
  return percentileOfSorted(
    [...values].sort((a, b) => a - b),
    50,
  );
}

/** Rounds to a number of significant digits, for readable results. */
export function round(value: number, digits = 4): number {
  if (!Number.isFinite(value) || value === 0) return value;
  return Number(value.toPrecision(digits));
}

/** Epoch milliseconds with sub-millisecond precision, comparable across processes on one machine. */
export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}
