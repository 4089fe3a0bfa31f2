import type { StoredNotification } from '../../src/backend/backend.js';
import { loadConfig } from '../../src/config/load.js';
import { compileWatchFilter, type NotificationPredicate } from '../../src/filter/watch-filter.js';
import type { JsonObject } from '../../src/json/json-value.js';
import { parseJsonBody } from '../../src/json/lossless-parse.js';
import { prepareNotification, type NotifyInput } from '../../src/schema/notify-identifier.js';
import { SchemaRegistry } from '../../src/schema/schema-registry.js';
import { StoredIdentityReader } from '../../src/schema/stored-identifier.js';
import { checkSpatialShape, prepareWatch } from '../../src/schema/watch-identifier.js';
import { DEFAULT_CONFIG_FILE, ROOT } from '../support/paths.js';
import type { Scenario, ScenarioContext } from '../support/scenario.js';
import { median, round } from '../support/stats.js';

/**
 * ns per notification per filter of the WatchFilter, micro-benchmarked in this process: a
 * predicate built as a watch request builds it (`prepareWatch` + `compileWatchFilter` with the
 * event types of config/config.yaml), run over M distinct notifications shaped as notify stores
 * them. Every notification is a fresh object, so the per-notification caches (identifier header,
 * geometry) are filled inside the timed loop, as for the first watcher that sees a notification;
 * `*_cached_ns` times the same objects again, as for every further watcher. Every notification
 * matches, so every check runs. Value: the slowest filter's median; baseline: the 2 µs target.
 */
const SIZES = { full: { notifications: 20_000, rounds: 9 }, quick: { notifications: 5_000, rounds: 5 } };
const WARMUP_ROUNDS = 3;
const TARGET_NS = 2_000;

interface FilterCase {
  readonly name: string;
  readonly watch: string;
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
    watch: JSON.stringify({ event_type: 'mars', identifier: { class: 'od', step: { between: [0, 1000] }, domain: { in: ['g', 'h'] } } }),
    notify: (i) =>
      JSON.stringify({
        event_type: 'mars',
        identifier: { class: 'od', expver: '1', domain: i % 2 === 0 ? 'g' : 'h', date: `2025-07-${String(1 + (i % 28)).padStart(2, '0')}`, time: '12:00', stream: 'enfo', step: String(i % 1000) },
        payload: { location: `/data/${i}.grib` },
      }),
  },
  {
    name: 'polygon',
    watch: JSON.stringify({ event_type: 'extreme_event', identifier: { region: 'north', run_time: '1200', severity: '*', polygon: ringText(51, 11, 1.5, 6) } }),
    // An 8-vertex area around (51 ± 0.5, 11 ± 0.5), different for every notification.
    notify: (i) =>
      JSON.stringify({
        event_type: 'extreme_event',
        identifier: { region: 'north', run_time: '1200', severity: String(1 + (i % 7)), anomaly: '12.5', polygon: ringText(50.5 + (i % 100) / 100, 10.5 + (i % 97) / 97, 1, 8) },
        payload: null,
      }),
  },
  {
    name: 'point_cloud',
    watch: JSON.stringify({ event_type: 'sensor_cloud', identifier: { date: '20250706', time: '*', polygon: ringText(51, 11, 1, 6) } }),
    // 20 points; the first 10 lie outside the watch polygon, so `some` tests 11 of them.
    notify: (i) =>
      JSON.stringify({
        event_type: 'sensor_cloud',
        identifier: {
          date: '20250706',
          time: '12:00',
          point_cloud: Array.from({ length: 20 }, (_, k) => (k < 10 ? [40 + k + (i % 50) / 100, 0 + k] : [50.5 + k / 100, 10.5 + (i % 50) / 100])),
        },
        payload: null,
      }),
  },
];

function registry(): SchemaRegistry {
  const config = loadConfig({ env: { AVISOSERVER_CONFIG_FILE: DEFAULT_CONFIG_FILE }, cwd: ROOT, systemFile: '/nonexistent' });
  return new SchemaRegistry(config.notification_schema, true);
}

function predicateFor(schemas: SchemaRegistry, watchBody: string): NotificationPredicate {
  const request = parseJsonBody(watchBody) as { event_type: string; identifier: JsonObject };
  const point = checkSpatialShape(request.identifier);
  const selection = prepareWatch(schemas, 'watch', request, point);
  return compileWatchFilter(selection, new StoredIdentityReader(schemas));
}

/** What notify stores: topic, payload text, headers; turned into fresh StoredNotifications per round. */
function storedTemplates(schemas: SchemaRegistry, notify: (index: number) => string, count: number): Omit<StoredNotification, 'sequence'>[] {
  const now = BigInt(Date.now()) * 1_000_000n;
  return Array.from({ length: count }, (_, index) => {
    const prepared = prepareNotification(schemas, parseJsonBody(notify(index)) as unknown as NotifyInput);
    return { topic: prepared.topic, payload: prepared.payload, timestampNs: now, metadata: prepared.metadata };
  });
}

function timeRound(predicate: NotificationPredicate, notifications: readonly StoredNotification[]): { ns: number; matched: number } {
  let matched = 0;
  const started = process.hrtime.bigint();
  for (const notification of notifications) if (predicate(notification)) matched++;
  const elapsed = Number(process.hrtime.bigint() - started);
  return { ns: elapsed / notifications.length, matched };
}

export const match: Scenario = {
  name: 'match',
  target: `ratio ≤ 1.00 (${TARGET_NS} ns)`,
  async run(context: ScenarioContext) {
    const size = context.quick ? SIZES.quick : SIZES.full;
    const schemas = registry();
    const extra: Record<string, unknown> = { notifications: size.notifications, rounds: size.rounds };
    const problems: string[] = [];
    let slowest = 0;
    for (const filterCase of CASES) {
      const predicate = predicateFor(schemas, filterCase.watch);
      const templates = storedTemplates(schemas, filterCase.notify, size.notifications);
      const fresh: number[] = [];
      const cached: number[] = [];
      for (let round = 0; round < WARMUP_ROUNDS + size.rounds; round++) {
        const notifications: StoredNotification[] = templates.map((template, index) => ({ sequence: index + 1, ...template }));
        const first = timeRound(predicate, notifications);
        const again = timeRound(predicate, notifications);
        if (first.matched !== notifications.length || again.matched !== notifications.length) {
          problems.push(`${filterCase.name}: matched ${first.matched} (then ${again.matched}) of ${notifications.length} notifications that all match`);
        }
        if (round < WARMUP_ROUNDS) continue;
        fresh.push(first.ns);
        cached.push(again.ns);
      }
      const freshNs = median(fresh);
      extra[`${filterCase.name}_ns`] = round(freshNs);
      extra[`${filterCase.name}_cached_ns`] = round(median(cached));
      slowest = Math.max(slowest, freshNs);
    }
    return {
      value: round(slowest),
      unit: 'ns/notification',
      baseline: TARGET_NS,
      ratio: round(slowest / TARGET_NS, 3),
      pass: slowest <= TARGET_NS,
      problems: [...new Set(problems)],
      summary: CASES.map((c) => `${c.name} ${Math.round(extra[`${c.name}_ns`] as number)}`).join(', ') + ' ns',
      extra,
    };
  },
};
