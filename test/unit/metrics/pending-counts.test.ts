import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { PendingIncrements, PendingObservations } from '../../../src/metrics/pending-counts.js';

/**
 * Per-frame series kept as plain numbers until prom-client reads them: the exposition must be what
 * observing and incrementing each time would have made.
 */

const BUCKETS = [0.001, 0.01, 0.1, 1];

describe('pending counts', () => {
  it('a histogram fed through PendingObservations exposes what observe() would have', async () => {
    const direct = new Histogram({ name: 'direct', help: 'h', labelNames: ['backend'], buckets: BUCKETS, registers: [new Registry()] });
    const pending = new PendingObservations(BUCKETS);
    const drained = new Histogram({
      name: 'drained',
      help: 'h',
      labelNames: ['backend'],
      buckets: BUCKETS,
      registers: [new Registry()],
      collect() {
        pending.drainInto(this);
      },
    });
    direct.zero({ backend: 'x' });
    drained.zero({ backend: 'x' });
    for (const value of [0, 0.0005, 0.0005, 0.005, 0.05, 0.05, 0.5, 5, 5, 5]) {
      direct.labels({ backend: 'x' }).observe(value);
      pending.observe(value);
    }
    const values = async (histogram: Histogram<string>) =>
      (await histogram.get()).values.map((v) => [v.metricName?.replace(/^\w+?_/, ''), v.labels, v.value]);
    expect(await values(drained)).toEqual(await values(direct));
    // Drained once: reading again adds nothing.
    expect(await values(drained)).toEqual(await values(direct));
  });

  it('a counter fed through PendingIncrements exposes every increment, per series', async () => {
    const pending = new PendingIncrements<'route'>();
    const counter = new Counter({
      name: 'frames',
      help: 'c',
      labelNames: ['route'],
      registers: [new Registry()],
      collect() {
        pending.drainInto(this);
      },
    });
    const watch = pending.incrementer({ route: 'watch' });
    const replay = pending.incrementer({ route: 'replay' });
    for (let i = 0; i < 5; i++) watch();
    replay();
    const read = async () => Object.fromEntries((await counter.get()).values.map((v) => [v.labels.route, v.value]));
    expect(await read()).toEqual({ watch: 5, replay: 1 });
    watch();
    expect(await read()).toEqual({ watch: 6, replay: 1 });
  });
});
