import type { StoredNotification } from '../../src/backend/backend.js';
import type { NotificationPredicate } from '../../src/filter/watch-filter.js';
import { StoredIdentityReader } from '../../src/schema/stored-identifier.js';
import type { Scenario, ScenarioContext } from '../support/scenario.js';
import { median, round } from '../support/stats.js';
import { compiledWatch, configSchemaRegistry, storedTemplates } from '../support/stored-layout.js';

/**
 * ns per notification per filter of the WatchFilter, micro-benchmarked in this process: F
 * predicates built as watch requests build them (`prepareWatch` + `compileWatchFilter` with the
 * event types of config/config.yaml, each watch slightly different) run over M distinct
 * notifications shaped as notify stores them, notification by notification as the live feed hands
 * one notification to every subscription. Every notification is a fresh object each round, so the
 * per-notification caches (identifier header, geometry) are filled inside the timed loop by the
 * first filter and shared by the other F − 1. Value: total time / (M × F), the slowest filter
 * kind's median. `*_first_watcher_ns` times one filter alone over fresh notifications (the cost
 * when a notification has a single watcher, parsing included); `*_cached_ns` the same filter
 * again over the same objects. Every notification matches every filter, so every check runs.
 */
const SIZES = {
  full: { notifications: 5_000, filters: 100, rounds: 7 },
  quick: { notifications: 1_000, filters: 50, rounds: 5 },
};
const WARMUP_ROUNDS = 3;
const TARGET_NS = 2_000;

interface FilterCase {
  readonly name: string;
  /** The k-th watch request of the case; every one matches every notification of the case. */
  readonly watch: (k: number) => string;
  readonly notify: (index: number) => string;
}

/** A ring of `vertices` points around (lat, lon), closed, as polygon text. */
function ringText(lat: number, lon: number, radius: number, vertices: number): string {
  const points: string[] = [];
  for (let k = 0; k < vertices; k++) {
    const angle = (2 * Math.PI * k) / vertices;
    points.push(`${(lat + radius * Math.sin(angle)).toFixed(4)},${(lon + radius * Math.cos(angle)).toFixed(4)}`);
  }
  points.push(points[0] as string);
  return `(${points.join(',')})`;
}

const CASES: readonly FilterCase[] = [
  {
    name: 'constraints',
    watch: (k) =>
      JSON.stringify({ event_type: 'mars', identifier: { class: 'od', step: { between: [0, 1000 + k] }, domain: { in: ['g', 'h'] } } }),
    notify: (i) =>
      JSON.stringify({
        event_type: 'mars',
        identifier: {
          class: 'od',
          expver: '1',
          domain: i % 2 === 0 ? 'g' : 'h',
          date: `2025-07-${String(1 + (i % 28)).padStart(2, '0')}`,
          time: '12:00',
          stream: 'enfo',
          step: String(i % 1000),
        },
        payload: { location: `/data/${i}.grib` },
      }),
  },
  {
    name: 'polygon',
    watch: (k) =>
      JSON.stringify({
        event_type: 'extreme_event',
        identifier: { region: 'north', run_time: '1200', severity: '*', polygon: ringText(51, 11, 1.5 + k / 1000, 6) },
      }),
    // An 8-vertex area around (51 ± 0.5, 11 ± 0.5), different for every notification.
    notify: (i) =>
      JSON.stringify({
        event_type: 'extreme_event',
        identifier: {
          region: 'north',
          run_time: '1200',
          severity: String(1 + (i % 7)),
          anomaly: '12.5',
          polygon: ringText(50.5 + (i % 100) / 100, 10.5 + (i % 97) / 97, 1, 8),
        },
        payload: null,
      }),
  },
  {
    name: 'point_cloud',
    watch: (k) =>
      JSON.stringify({
        event_type: 'sensor_cloud',
        identifier: { date: '20250706', time: '*', polygon: ringText(51, 11, 1 + k / 1000, 6) },
      }),
    // 20 points; the first 10 lie outside the watch polygon, so `some` tests 11 of them.
    notify: (i) =>
      JSON.stringify({
        event_type: 'sensor_cloud',
        identifier: {
          date: '20250706',
          time: '12:00',
          point_cloud: Array.from({ length: 20 }, (_, k) =>
            k < 10 ? [40 + k + (i % 50) / 100, 0 + k] : [50.5 + k / 100, 10.5 + (i % 50) / 100],
          ),
        },
        payload: null,
      }),
  },
];

function timeRound(predicate: NotificationPredicate, notifications: readonly StoredNotification[]): { ns: number; matched: number } {
  return timeFanOut([predicate], notifications);
}

/** Each notification through every predicate in turn; ns per (notification, predicate) pair. */
function timeFanOut(
  predicates: readonly NotificationPredicate[],
  notifications: readonly StoredNotification[],
): { ns: number; matched: number } {
  let matched = 0;
  const started = process.hrtime.bigint();
  for (const notification of notifications) {
    for (const predicate of predicates) if (predicate(notification)) matched++;
  }
  const elapsed = Number(process.hrtime.bigint() - started);
  return { ns: elapsed / (notifications.length * predicates.length), matched };
}

export const match: Scenario = {
  name: 'match',
  target: `ratio ≤ 1.00 (${TARGET_NS} ns)`,
  async run(context: ScenarioContext) {
    const size = context.quick ? SIZES.quick : SIZES.full;
    const schemas = configSchemaRegistry();
    const extra: Record<string, unknown> = { notifications: size.notifications, filters: size.filters, rounds: size.rounds };
    const problems: string[] = [];
    let slowest = 0;
    for (const filterCase of CASES) {
      const identities = new StoredIdentityReader(schemas);
      // One StoredIdentityReader shared by every predicate, as the server's are (src/app.ts).
      const predicates = Array.from({ length: size.filters }, (_, k) => compiledWatch(schemas, identities, filterCase.watch(k)).predicate);
      const templates = storedTemplates(schemas, filterCase.notify, size.notifications);
      const fanOut: number[] = [];
      const firstWatcher: number[] = [];
      const cached: number[] = [];
      const fresh = (): StoredNotification[] => templates.map((template, index) => ({ sequence: index + 1, ...template }));
      for (let round = 0; round < WARMUP_ROUNDS + size.rounds; round++) {
        const shared = timeFanOut(predicates, fresh());
        const single = fresh();
        const first = timeRound(predicates[0] as NotificationPredicate, single);
        const again = timeRound(predicates[0] as NotificationPredicate, single);
        const expected = [size.notifications * size.filters, size.notifications, size.notifications];
        const got = [shared.matched, first.matched, again.matched];
        if (got.some((count, i) => count !== expected[i])) {
          problems.push(`${filterCase.name}: matched ${got.join('/')} of ${expected.join('/')} checks that all match`);
        }
        if (round < WARMUP_ROUNDS) continue;
        fanOut.push(shared.ns);
        firstWatcher.push(first.ns);
        cached.push(again.ns);
      }
      const fanOutNs = median(fanOut);
      extra[`${filterCase.name}_ns`] = round(fanOutNs);
      extra[`${filterCase.name}_first_watcher_ns`] = round(median(firstWatcher));
      extra[`${filterCase.name}_cached_ns`] = round(median(cached));
      slowest = Math.max(slowest, fanOutNs);
    }
    return {
      value: round(slowest),
      unit: 'ns/notification',
      baseline: TARGET_NS,
      ratio: round(slowest / TARGET_NS, 3),
      pass: slowest <= TARGET_NS,
      problems: [...new Set(problems)],
      summary:
        `${size.filters} filters: ` +
        CASES.map((c) => `${c.name} ${Math.round(extra[`${c.name}_ns`] as number)}`).join(', ') +
        ' ns; one filter alone: ' +
        CASES.map((c) => `${Math.round(extra[`${c.name}_first_watcher_ns`] as number)}`).join('/') +
        ' ns',
      extra,
    };
  },
};
