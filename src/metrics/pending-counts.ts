import type { Counter, Histogram } from 'prom-client';

/*
 * Series that change once per delivered frame, thousands of times per notification: the changes
 * are kept as plain numbers and added to prom-client's series when it reads them (the metric's
 * `collect`), so a delivery costs an increment instead of a label lookup and a bucket search.
 */

/** Increments of one counter's series, added to it when it is read. */
export class PendingIncrements<T extends string> {
  private readonly series: { readonly labels: Partial<Record<T, string>>; count: number }[] = [];

  /** A function adding one to the series `labels`; called per frame. */
  incrementer(labels: Partial<Record<T, string>>): () => void {
    const entry = { labels, count: 0 };
    this.series.push(entry);
    return () => {
      entry.count++;
    };
  }

  drainInto(counter: Counter<T>): void {
    for (const entry of this.series) {
      if (entry.count === 0) continue;
      counter.inc(entry.labels, entry.count);
      entry.count = 0;
    }
  }
}

/** The internal shape of one prom-client histogram series (prom-client 15: `hashMap` values). */
interface HistogramSeries {
  bucketValues: Record<number, number>;
  sum: number;
  count: number;
}

/**
 * Observations of one histogram series, kept as bucket counts and added to the series when it is
 * read. Observing the same value again (every frame of one notification's fan-out) skips the
 * bucket search.
 */
export class PendingObservations {
  private readonly counts: Float64Array;
  private sum = 0;
  private count = 0;
  private lastValue = Number.NaN;
  private lastBucket = -1;

  constructor(private readonly upperBounds: readonly number[]) {
    this.counts = new Float64Array(upperBounds.length);
  }

  observe(value: number): void {
    if (value !== this.lastValue) {
      this.lastValue = value;
      this.lastBucket = this.upperBounds.findIndex((bound) => value <= bound);
    }
    if (this.lastBucket >= 0) this.counts[this.lastBucket] = (this.counts[this.lastBucket] as number) + 1;
    this.sum += value;
    this.count++;
  }

  /**
   * Adds what was observed to the histogram's one series, which `zero` created: the same
   * buckets, sum and count as observing each value there would have made.
   */
  drainInto(histogram: Histogram<string>): void {
    if (this.count === 0) return;
    const series = Object.values((histogram as unknown as { hashMap: Record<string, HistogramSeries> }).hashMap)[0];
    if (!series) throw new Error(`histogram ${(histogram as unknown as { name: string }).name} has no series to add to (call zero first)`);
    this.upperBounds.forEach((bound, index) => {
      series.bucketValues[bound] = (series.bucketValues[bound] ?? 0) + (this.counts[index] as number);
    });
    series.sum += this.sum;
    series.count += this.count;
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }
}
