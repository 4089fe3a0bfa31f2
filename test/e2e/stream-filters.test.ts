import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { postJson } from '../support/http.js';
import { BACKEND_KINDS, BackendUnderTest } from '../support/backends.js';
import { TEST_SCHEMAS } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient, withoutHeartbeats, type SseEvent } from '../support/sse-client.js';
import { frameLabel } from '../support/transcript.js';

/**
 * Watch and replay filters against the real server process (docs/design/rules/schema-and-validation.md §6.2, §8,
 * docs/design/rules/schema-and-validation.md §9; seed "Spatial Filter Model" and "Identifier Constraints"; D7, D18, D21, D27).
 *
 * Every case stores matching and non-matching notifications and checks that exactly the matching
 * ones arrive, once replayed (`from_id` "0") and once live. Cases share one server; each run pins
 * one identifier field that the case does not test to a value no other run uses (for example
 * `run_time` on extreme_event), so the history of one run never leaks into another.
 *
 * Everything runs on both backends, each with its own server processes (and, for JetStream, its
 * own nats-server). `backend.config` keeps every notification of a topic on both (history per
 * topic in memory, `allow_duplicates` on every configured schema on JetStream), so the expected
 * notes are the same; the one exception, schema-less event types on JetStream, is spelled out in
 * that block.
 */

type Identifier = Record<string, unknown>;

/** A declared field that is not in key_order, to check that precise matching covers it (D18). */
const OUTSIDE_KEYS_SCHEMA = {
  topic: { base: 'outside', key_order: ['site'] },
  identifier: {
    site: { type: 'StringHandler', required: true },
    level: { type: 'IntHandler', range: [0, 10], required: false },
    band: { type: 'EnumHandler', values: ['low', 'high'], required: false },
    label: { type: 'StringHandler', required: false },
  },
  payload: { required: false },
};

const SENTINEL = 'sentinel';

/** A closed rectangle in the API's latitude-first text form. */
function box(minLat: number, minLon: number, maxLat: number, maxLon: number): string {
  return `(${minLat},${minLon},${maxLat},${minLon},${maxLat},${maxLon},${minLat},${maxLon},${minLat},${minLon})`;
}

/** The reference square of these tests: latitude 50–52, longitude 10–12. */
const SQUARE = box(50, 10, 52, 12);
const FAR_AWAY = '(10.0,10.0,10.2,10.0,10.2,10.2,10.0,10.2,10.0,10.0)';

let counter = 0;
function unique(): number {
  counter += 1;
  return counter;
}
function pad(n: number): string {
  return String(n).padStart(2, '0');
}
function uniqueTime(): string {
  const n = unique();
  return `${pad(Math.floor(n / 60) % 24)}${pad(n % 60)}`;
}
function uniqueDate(): string {
  const day = new Date(Date.UTC(2030, 0, 1) + unique() * 86_400_000);
  return day.toISOString().slice(0, 10).replaceAll('-', '');
}

/**
 * Per event type: a complete notify identifier (notify needs every declared field), and the field
 * each run pins to keep its notifications apart.
 */
interface EventTypeSetup {
  readonly defaults: Identifier;
  readonly pin: () => Identifier;
}

const EVENT_TYPES = {
  extreme_event: {
    defaults: { region: 'north', severity: '4', anomaly: '50', polygon: SQUARE },
    pin: () => ({ run_time: uniqueTime() }),
  },
  test_polygon: {
    defaults: { time: '1200', polygon: SQUARE },
    pin: () => ({ date: uniqueDate() }),
  },
  sensor_cloud: {
    defaults: { point_cloud: [[51, 11]] },
    pin: () => ({ date: uniqueDate() }),
  },
  outside_keys: {
    defaults: { level: '5', band: 'low', label: 'alpha' },
    pin: () => ({ site: `site${unique()}` }),
  },
  mars: {
    defaults: { class: 'od', expver: '1', domain: 'g', date: '20250706', time: '1200', step: '1' },
    pin: () => ({ stream: `s${unique()}` }),
  },
} satisfies Record<string, EventTypeSetup>;

interface FilterCase {
  readonly name: string;
  readonly eventType: keyof typeof EVENT_TYPES;
  /** The watch/replay identifier, without the pinned field. */
  readonly filter: Identifier;
  /** Notifications to store, by note (never integer-like, so key order is publish order), as changes to the defaults. */
  readonly stored: Readonly<Record<string, Identifier>>;
  /** Notes that must arrive, in publish order; the first one's identifier also makes the sentinel. */
  readonly expected: readonly string[];
}

const clients: SseClient[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.close();
});

async function open(base: string, path: string, body: unknown): Promise<SseClient> {
  const client = await SseClient.open(`${base}${path}`, body);
  clients.push(client);
  expect(client.status, client.errorBody).toBe(200);
  return client;
}

async function publish(base: string, eventType: string, identifier: Identifier, note: string): Promise<void> {
  const response = await postJson(`${base}/api/v1/notification`, { event_type: eventType, identifier, payload: { note } });
  expect(response.status, `notify ${note}: ${response.text}`).toBe(200);
}

function noteOf(event: SseEvent): string | undefined {
  const data = event.json.data as { payload?: { note?: string } } | undefined;
  return data?.payload?.note;
}

function identifierOf(event: SseEvent | undefined): Identifier | undefined {
  return (event?.json.data as { identifier?: Identifier } | undefined)?.identifier;
}

/** Replays from sequence 0 and returns the CloudEvents, checking the frames around them. */
async function replayAll(base: string, body: Record<string, unknown>): Promise<SseEvent[]> {
  const client = await open(base, '/api/v1/replay', { ...body, from_id: '0' });
  const events = withoutHeartbeats(await client.rest());
  const labels = events.map(frameLabel);
  expect(labels[0]).toBe('replay_started');
  expect(labels.slice(-2)).toEqual(['replay_completed', 'end_of_stream']);
  // History a stream keeping one notification per topic superseded is said (D42), not returned.
  const notifications = events.slice(1, -2).filter((event) => event.json.type !== 'history_gap');
  for (const event of notifications) {
    expect(event.event).toBe('replay');
    expect(event.json.specversion).toBe('1.0');
  }
  return notifications;
}

/** Opens a live-only watch and returns it once `connection_established` has arrived. */
async function watchLive(base: string, body: Record<string, unknown>): Promise<SseClient> {
  const client = await open(base, '/api/v1/watch', body);
  const first = await client.next();
  expect(first?.event).toBe('live-notification');
  expect(first?.json.type).toBe('connection_established');
  return client;
}

/** Live CloudEvents up to and including the sentinel, which the caller publishes last. */
async function untilSentinel(client: SseClient): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for (;;) {
    const event = await client.nextSignificant();
    if (!event) throw new Error(`stream ended before the sentinel; got ${out.map((e) => noteOf(e)).join(', ')}`);
    expect(event.event).toBe('live-notification');
    expect(event.json.specversion).toBe('1.0');
    out.push(event);
    if (noteOf(event) === SENTINEL) return out;
  }
}

function sentinelIdentifier(c: FilterCase, pin: Identifier): Identifier {
  const { defaults }: EventTypeSetup = EVENT_TYPES[c.eventType];
  const first = c.expected[0];
  if (first === undefined) throw new Error(`case ${c.name} needs at least one matching notification`);
  return { ...defaults, ...c.stored[first], ...pin };
}

async function storeCase(base: string, c: FilterCase, pin: Identifier): Promise<void> {
  const { defaults }: EventTypeSetup = EVENT_TYPES[c.eventType];
  for (const [note, change] of Object.entries(c.stored)) {
    await publish(base, c.eventType, { ...defaults, ...change, ...pin }, note);
  }
}

describe.each(BACKEND_KINDS)('on the %s backend', (kind) => {
  const backend = new BackendUnderTest(kind);
  let server: RunningServer;
  beforeAll(async () => {
    await backend.start();
    server = await startServer({
      config: backend.config({ notification_schema: { ...TEST_SCHEMAS, outside_keys: OUTSIDE_KEYS_SCHEMA } }),
    });
  });
  afterAll(async () => {
    // Stop the server before its NATS, even when the suite failed half-way through starting.
    if (server !== undefined) await server.stop();
    await backend.stop();
  });

  /** Replay and live tests for each case. */
  function describeCases(cases: readonly FilterCase[]): void {
    describe.each(cases)('$name', (c) => {
      it('replay from_id "0" delivers exactly the matching stored notifications', async () => {
        const pin = EVENT_TYPES[c.eventType].pin();
        await storeCase(server.url, c, pin);
        const events = await replayAll(server.url, { event_type: c.eventType, identifier: { ...c.filter, ...pin } });
        expect(events.map(noteOf)).toEqual(c.expected);
      });

      it('a live watch delivers exactly the matching new notifications', async () => {
        const pin = EVENT_TYPES[c.eventType].pin();
        const client = await watchLive(server.url, { event_type: c.eventType, identifier: { ...c.filter, ...pin } });
        await storeCase(server.url, c, pin);
        await publish(server.url, c.eventType, sentinelIdentifier(c, pin), SENTINEL);
        const events = await untilSentinel(client);
        expect(events.map(noteOf)).toEqual([...c.expected, SENTINEL]);
      });
    });
  }

  describe('scalar values', () => {
    describeCases([
      {
        name: 'exact values match canonically ("NORTH" matches north, "42.50" matches 42.5)',
        eventType: 'extreme_event',
        filter: { region: 'NORTH', severity: '04', anomaly: '42.50' },
        stored: {
          'north/42.5': { region: 'north', anomaly: '42.5' },
          'south/42.5': { region: 'south', anomaly: '42.5' },
          'North/42.500': { region: 'North', anomaly: '42.500' },
          'north/42.6': { region: 'north', anomaly: '42.6' },
          'north/42.5/severity 5': { region: 'north', anomaly: '42.5', severity: '5' },
          'north/4.25e1': { region: 'north', anomaly: '4.25e1' },
        },
        expected: ['north/42.5', 'North/42.500', 'north/4.25e1'],
      },
      {
        name: 'JSON numbers are the same values as their text ("severity": 4)',
        eventType: 'extreme_event',
        filter: { region: 'north', severity: 4 },
        stored: { 'severity 4': { severity: '4' }, 'severity 3': { severity: '3' }, 'severity 007': { severity: '007' } },
        expected: ['severity 4'],
      },
      {
        name: 'a scalar "*" on required Enum and Int fields means any value (D18)',
        eventType: 'extreme_event',
        filter: { region: '*', severity: '*' },
        stored: {
          'north/1': { region: 'north', severity: '1' },
          'south/7': { region: 'south', severity: '7' },
          'west/4': { region: 'west', severity: '4' },
        },
        expected: ['north/1', 'south/7', 'west/4'],
      },
      {
        name: 'a scalar "*" next to an exact value only opens its own field (D18)',
        eventType: 'extreme_event',
        filter: { region: 'east', severity: '*', anomaly: '*' },
        stored: {
          'east/1': { region: 'east', severity: '1', anomaly: '0' },
          'west/1': { region: 'west', severity: '1' },
          'east/6': { region: 'east', severity: '6', anomaly: '99.9' },
        },
        expected: ['east/1', 'east/6'],
      },
      {
        name: 'a polygon "*" means no spatial filter (D18)',
        eventType: 'test_polygon',
        filter: { polygon: '*' },
        stored: { square: { polygon: SQUARE }, 'far away': { polygon: FAR_AWAY }, 'at 1300': { time: '1300' } },
        expected: ['square', 'far away', 'at 1300'],
      },
      {
        name: 'omitted optional fields are wildcards (anomaly and polygon on extreme_event)',
        eventType: 'extreme_event',
        filter: { region: 'north', severity: '4' },
        stored: {
          'anomaly 1': { anomaly: '1' },
          'anomaly 99, far away': { anomaly: '99', polygon: FAR_AWAY },
          'severity 5': { severity: '5' },
          south: { region: 'south' },
        },
        expected: ['anomaly 1', 'anomaly 99, far away'],
      },
      {
        name: 'omitted optional fields are wildcards (every optional mars field)',
        eventType: 'mars',
        filter: { class: 'od' },
        stored: {
          'od 1': { step: '1', domain: 'a' },
          'rd 1': { class: 'rd' },
          'od 2': { step: '2', date: '20250707', time: '0000', expver: 'prod' },
        },
        expected: ['od 1', 'od 2'],
      },
      {
        name: 'a TimeHandler and a DateHandler filter match canonically ("9:05", "2025-07-06")',
        eventType: 'mars',
        filter: { class: 'od', time: '9:05', date: '2025-07-06' },
        stored: {
          '0905 20250706': { time: '0905', date: '20250706' },
          '0906 20250706': { time: '0906', date: '20250706' },
          '09:05 2025-187': { time: '09:05', date: '2025-187' },
          '0905 20250707': { time: '0905', date: '20250707' },
        },
        expected: ['0905 20250706', '09:05 2025-187'],
      },
      {
        name: 'an ExpverHandler filter matches canonically ("1" matches 0001); StringHandler is case-sensitive',
        eventType: 'mars',
        filter: { class: 'od', expver: '1' },
        stored: {
          'od 0001': { expver: '0001' },
          'od 1': { expver: '1' },
          'od prod': { expver: 'prod' },
          'OD 0001': { class: 'OD', expver: '0001' },
          'od 0002': { expver: '2' },
        },
        expected: ['od 0001', 'od 1'],
      },
    ]);
  });

  const SEVERITIES: Record<string, Identifier> = Object.fromEntries(
    [1, 2, 3, 4, 5, 6, 7].map((n) => [`severity ${n}`, { severity: String(n) }]),
  );
  const severities = (...values: number[]): string[] => values.map((n) => `severity ${n}`);

  describe('Int constraints (severity 1 to 7 stored)', () => {
    describeCases(
      (
        [
          ['eq', { eq: 4 }, [4]],
          ['in', { in: [2, 5, 7] }, [2, 5, 7]],
          ['gt', { gt: 5 }, [6, 7]],
          ['gte', { gte: 5 }, [5, 6, 7]],
          ['lt', { lt: 3 }, [1, 2]],
          ['lte', { lte: 3 }, [1, 2, 3]],
          ['between (inclusive on both ends)', { between: [3, 5] }, [3, 4, 5]],
          ['between with equal bounds', { between: [6, 6] }, [6]],
        ] as const
      ).map(([operator, constraint, expected]) => ({
        name: `${operator} ${JSON.stringify(constraint)}`,
        eventType: 'extreme_event' as const,
        filter: { region: 'north', severity: constraint },
        stored: SEVERITIES,
        expected: severities(...expected),
      })),
    );
  });

  /**
   * Anomalies as published; the note names the canonical value. (Notes are not integer-like, so
   * object key order is publish order.)
   */
  const ANOMALIES: Record<string, Identifier> = {
    'anomaly 0.3': { anomaly: '0.3' },
    'anomaly 0.30000000000000004': { anomaly: '0.30000000000000004' },
    'anomaly 10': { anomaly: '10.0' },
    'anomaly 42.5': { anomaly: '42.50' },
    'anomaly 50': { anomaly: '5e1' },
    'anomaly 99.5': { anomaly: '99.5' },
  };

  describe('Float constraints (anomaly stored as 0.3, 0.30000000000000004, 10.0, 42.50, 5e1, 99.5)', () => {
    describeCases(
      (
        [
          ['eq (exact, no tolerance)', { eq: 0.3 }, ['0.3']],
          ['eq on the longer spelling', { eq: 0.30000000000000004 }, ['0.30000000000000004']],
          ['eq on an integral value', { eq: 10 }, ['10']],
          ['in', { in: [10, 42.5, 77] }, ['10', '42.5']],
          ['gt', { gt: 42.5 }, ['50', '99.5']],
          ['gte', { gte: 42.5 }, ['42.5', '50', '99.5']],
          ['lt', { lt: 10 }, ['0.3', '0.30000000000000004']],
          ['lte', { lte: 10 }, ['0.3', '0.30000000000000004', '10']],
          ['between (inclusive on both ends)', { between: [10, 50] }, ['10', '42.5', '50']],
        ] as const
      ).map(([operator, constraint, expected]) => ({
        name: `${operator} ${JSON.stringify(constraint)}`,
        eventType: 'extreme_event' as const,
        filter: { region: 'north', severity: '4', anomaly: constraint },
        stored: ANOMALIES,
        expected: expected.map((value) => `anomaly ${value}`),
      })),
    );
  });

  describe('Enum constraints (case-insensitive)', () => {
    const regions: Record<string, Identifier> = {
      north: { region: 'north' },
      SOUTH: { region: 'SOUTH' },
      East: { region: 'East' },
      west: { region: 'west' },
    };
    describeCases([
      { name: 'eq', eventType: 'extreme_event', filter: { region: { eq: 'north' }, severity: '4' }, stored: regions, expected: ['north'] },
      {
        name: 'eq with an upper-case operand matches a value stored in upper case',
        eventType: 'extreme_event',
        filter: { region: { eq: 'SOUTH' }, severity: '4' },
        stored: regions,
        expected: ['SOUTH'],
      },
      {
        name: 'in with mixed-case operands',
        eventType: 'extreme_event',
        filter: { region: { in: ['North', 'east'] }, severity: '4' },
        stored: regions,
        expected: ['north', 'East'],
      },
      {
        name: 'Enum and Int constraints together',
        eventType: 'extreme_event',
        filter: { region: { in: ['north', 'south'] }, severity: { gte: 5 } },
        stored: {
          'north 5': { region: 'north', severity: '5' },
          'north 4': { region: 'north', severity: '4' },
          'south 7': { region: 'south', severity: '7' },
          'east 7': { region: 'east', severity: '7' },
        },
        expected: ['north 5', 'south 7'],
      },
    ]);
  });

  describe('fields outside key_order are matched precisely too (D18)', () => {
    describeCases([
      {
        name: 'a StringHandler scalar outside key_order',
        eventType: 'outside_keys',
        filter: { label: 'alpha' },
        stored: { alpha: { label: 'alpha' }, beta: { label: 'beta' }, ALPHA: { label: 'ALPHA' } },
        expected: ['alpha'],
      },
      {
        name: 'an IntHandler scalar outside key_order, canonicalised ("05" matches 5)',
        eventType: 'outside_keys',
        filter: { level: '05' },
        stored: { 'level 5': { level: '5' }, 'level 6': { level: '6' }, 'level 005': { level: '005' } },
        expected: ['level 5', 'level 005'],
      },
      {
        name: 'an Int constraint outside key_order',
        eventType: 'outside_keys',
        filter: { level: { between: [3, 6] } },
        stored: { 'level 2': { level: '2' }, 'level 3': { level: '3' }, 'level 6': { level: '6' }, 'level 7': { level: '7' } },
        expected: ['level 3', 'level 6'],
      },
      {
        name: 'an Enum constraint outside key_order',
        eventType: 'outside_keys',
        filter: { band: { eq: 'HIGH' } },
        stored: { low: { band: 'low' }, high: { band: 'high' }, HIGH: { band: 'HIGH' } },
        expected: ['high', 'HIGH'],
      },
      {
        name: 'several fields outside key_order together',
        eventType: 'outside_keys',
        filter: { label: 'alpha', level: { gt: 4 }, band: 'low' },
        stored: {
          match: { label: 'alpha', level: '5', band: 'low' },
          'wrong label': { label: 'beta', level: '5', band: 'low' },
          'low level': { label: 'alpha', level: '4', band: 'low' },
          'wrong band': { label: 'alpha', level: '9', band: 'high' },
        },
        expected: ['match'],
      },
    ]);
  });

  describe('polygon intersection (request polygon: latitude 50–52, longitude 10–12)', () => {
    const shapes: Record<string, Identifier> = {
      overlapping: { polygon: box(51, 11, 53, 13) },
      'containing the request': { polygon: box(49, 9, 53, 13) },
      'inside the request': { polygon: box(50.5, 10.5, 51.5, 11.5) },
      'touching along an edge': { polygon: box(52, 10, 54, 12) },
      'touching at a vertex': { polygon: box(52, 12, 53, 13) },
      // Its bounding box (51.9–53, 11.9–12.5) overlaps the request's corner; the triangle does not.
      'near, boxes overlap, shapes disjoint': { polygon: '(51.9,12.5,53,12.5,53,11.9,51.9,12.5)' },
      'far away': { polygon: FAR_AWAY },
      'as an array, overlapping': {
        polygon: [
          [51, 11],
          [53, 11],
          [53, 13],
          [51, 13],
          [51, 11],
        ],
      },
      // A bar across the square: no vertex of either shape lies inside the other.
      'crossing, no vertex inside': { polygon: box(50.5, 9, 51.5, 13) },
    };
    // A triangle whose bounding box (50–52, 10–12) contains the corner square 51.5–52 × 11.5–12,
    // although the triangle itself (lat + lon ≤ 62) never reaches it.
    const triangle = '(50,10,52,10,50,12,50,10)';
    const expected = [
      'overlapping',
      'containing the request',
      'inside the request',
      'touching along an edge',
      'touching at a vertex',
      'as an array, overlapping',
      'crossing, no vertex inside',
    ];
    describeCases([
      {
        name: 'on test_polygon: overlap, containment and touching match; far away does not',
        eventType: 'test_polygon',
        filter: { polygon: SQUARE },
        stored: shapes,
        expected,
      },
      {
        name: 'on test_polygon with the request polygon as an array',
        eventType: 'test_polygon',
        filter: {
          polygon: [
            [50, 10],
            [52, 10],
            [52, 12],
            [50, 12],
            [50, 10],
          ],
        },
        stored: { overlapping: shapes.overlapping as Identifier, 'far away': { polygon: FAR_AWAY } },
        expected: ['overlapping'],
      },
      {
        name: 'on test_polygon: overlapping bounding boxes are not enough',
        eventType: 'test_polygon',
        filter: { polygon: triangle },
        stored: { 'corner square': { polygon: box(51.5, 11.5, 52, 12) }, 'inside the triangle': { polygon: box(50.2, 10.2, 50.8, 10.8) } },
        expected: ['inside the triangle'],
      },
      {
        name: "on extreme_event's optional polygon, together with scalar filters",
        eventType: 'extreme_event',
        filter: { region: 'north', severity: '4', polygon: SQUARE },
        stored: {
          overlapping: { polygon: box(51, 11, 53, 13) },
          'far away': { polygon: FAR_AWAY },
          'touching along an edge': { polygon: box(52, 10, 54, 12) },
          'containing the request': { polygon: box(40, 0, 60, 20) },
          'overlapping but south': { polygon: box(51, 11, 53, 13), region: 'south' },
          'touching at a vertex': { polygon: box(48, 8, 50, 10) },
        },
        expected: ['overlapping', 'touching along an edge', 'containing the request', 'touching at a vertex'],
      },
    ]);
  });

  describe('point containment (point 51,11)', () => {
    describeCases([
      {
        name: 'strictly inside matches; on an edge, on a vertex or outside does not; point satisfies the required polygon',
        eventType: 'test_polygon',
        filter: { point: '51,11' },
        stored: {
          'strictly inside': { polygon: SQUARE },
          'on an edge': { polygon: box(51, 10, 53, 12) },
          'on a vertex': { polygon: box(51, 11, 53, 13) },
          outside: { polygon: box(53, 10, 55, 12) },
          'inside the box, outside the triangle': { polygon: '(50,10,51.5,10,50,11.5,50,10)' },
          'inside an array polygon': {
            polygon: [
              [50, 10],
              [52, 10],
              [52, 12],
              [50, 12],
              [50, 10],
            ],
          },
          // A U open towards high latitudes: the point sits in the notch, inside the bounding box.
          'in the notch of a U': { polygon: '(50,10,52,10,52,10.5,50.5,10.5,50.5,11.5,52,11.5,52,12,50,12,50,10)' },
          'in an arm of the U': { polygon: '(50,10,52,10,52,11.2,50.5,11.2,50.5,11.5,52,11.5,52,12,50,12,50,10)' },
        },
        expected: ['strictly inside', 'inside an array polygon', 'in an arm of the U'],
      },
      {
        name: 'the point in parentheses with spaces',
        eventType: 'test_polygon',
        filter: { point: '( 51 , 11 )' },
        stored: { inside: { polygon: SQUARE }, outside: { polygon: FAR_AWAY } },
        expected: ['inside'],
      },
      {
        name: 'the point as a [lat, lon] array',
        eventType: 'test_polygon',
        filter: { point: [51, 11] },
        stored: { inside: { polygon: SQUARE }, outside: { polygon: FAR_AWAY } },
        expected: ['inside'],
      },
      {
        name: "on extreme_event's optional polygon, together with scalar filters",
        eventType: 'extreme_event',
        filter: { region: 'north', severity: '4', point: '51,11' },
        stored: {
          inside: { polygon: SQUARE },
          'inside but severity 5': { polygon: SQUARE, severity: '5' },
          'on an edge': { polygon: box(51, 10, 53, 12) },
          outside: { polygon: FAR_AWAY },
        },
        expected: ['inside'],
      },
    ]);
  });

  describe('point clouds with a subscriber polygon (latitude 50–52, longitude 10–12)', () => {
    describeCases([
      {
        name: 'one point inside or on the boundary matches; all outside does not',
        eventType: 'sensor_cloud',
        filter: { polygon: SQUARE },
        stored: {
          'one point inside': {
            point_cloud: [
              [40, 0],
              [51, 11],
              [60, 20],
            ],
          },
          'a point on an edge': {
            point_cloud: [
              [52, 11],
              [60, 20],
            ],
          },
          'a point on a vertex': {
            point_cloud: [
              [0, 0],
              [50, 10],
            ],
          },
          'all outside, boxes overlap': {
            point_cloud: [
              [49, 11],
              [53, 11],
            ],
          },
          'all outside, far away': {
            point_cloud: [
              [0, 0],
              [1, 1],
              [2, 2],
            ],
          },
          'every point inside': {
            point_cloud: [
              [50.5, 10.5],
              [51.5, 11.5],
            ],
          },
        },
        expected: ['one point inside', 'a point on an edge', 'a point on a vertex', 'every point inside'],
      },
      {
        name: 'the subscriber polygon as an array',
        eventType: 'sensor_cloud',
        filter: {
          polygon: [
            [50, 10],
            [52, 10],
            [52, 12],
            [50, 12],
            [50, 10],
          ],
        },
        stored: { inside: { point_cloud: [[51, 11]] }, outside: { point_cloud: [[0, 0]] } },
        expected: ['inside'],
      },
    ]);
  });

  describe('what a delivered CloudEvent carries (D7, D27)', () => {
    it('extreme_event notifications carry every canonical field and the polygon as the canonical array', async () => {
      const runTime = uniqueTime();
      await publish(
        server.url,
        'extreme_event',
        { region: 'NORTH', run_time: runTime, severity: '007', anomaly: '42.50', polygon: ' ( 50 , 10 , 52,10, 52,12, 50,12, 50,10 ) ' },
        'a',
      );
      const [event] = await replayAll(server.url, {
        event_type: 'extreme_event',
        identifier: { region: 'north', run_time: runTime, severity: '7' },
      });
      expect(identifierOf(event)).toEqual({
        anomaly: '42.5',
        polygon: [
          [50, 10],
          [52, 10],
          [52, 12],
          [50, 12],
          [50, 10],
        ],
        region: 'north',
        run_time: runTime,
        severity: '7',
      });
      expect(event?.json.id).toMatch(/^extreme_event@\d+$/);
      expect(event?.json.type).toBe('int.ecmwf.aviso.extreme_event');
    });

    it('a polygon sent as an array comes back as the canonical array, not the request geometry', async () => {
      const date = uniqueDate();
      const polygon = [
        [50, 10],
        [52, 10],
        [52, 12],
        [50, 12],
        [50, 10],
      ];
      await publish(server.url, 'test_polygon', { date, time: '0600', polygon }, 'a');
      const [event] = await replayAll(server.url, { event_type: 'test_polygon', identifier: { date, point: '51,11' } });
      expect(identifierOf(event)).toEqual({ date, polygon, time: '0600' });
    });

    it('a point cloud comes back as sent, not the subscriber polygon', async () => {
      const date = uniqueDate();
      const cloud = [
        [51.25, 11.5],
        [0, 0],
      ];
      await publish(server.url, 'sensor_cloud', { date, point_cloud: cloud }, 'a');
      const [event] = await replayAll(server.url, { event_type: 'sensor_cloud', identifier: { date, polygon: SQUARE } });
      expect(identifierOf(event)).toEqual({ date, point_cloud: cloud });
    });

    it('fields outside key_order are carried in canonical form', async () => {
      const site = `site${unique()}`;
      await publish(server.url, 'outside_keys', { site, level: '007', band: 'HIGH', label: 'Alpha' }, 'a');
      const [event] = await replayAll(server.url, { event_type: 'outside_keys', identifier: { site } });
      expect(identifierOf(event)).toEqual({ band: 'high', label: 'Alpha', level: '7', site });
    });
  });

  /**
   * On JetStream each schema-less event type gets its own stream on first use (docs/design/rules/backends.md §7.3,
   * docs/design/rules/backends.md §7.4). That stream keeps only the latest notification of each exact topic: the fixed
   * `max_msgs_per_subject: 1` of docs/design/rules/backends.md §7.4 can only be lifted by a schema's `storage_policy`, which a
   * schema-less type does not have (B10). In memory `max_history_per_topic` covers every topic.
   * The replays below that store several notifications on one exact topic say so explicitly.
   */
  describe('generic (schema-less) event types in a non-strict server', () => {
    let generic: RunningServer;
    beforeAll(async () => {
      generic = await startServer({ config: backend.config({ notification_schema_strict: false }) });
    });
    afterAll(async () => {
      await generic.stop();
    });

    const eventType = (): string => `scratch_${unique()}`;
    const notes = (events: readonly SseEvent[]): (string | undefined)[] => events.map(noteOf);

    async function storeGeneric(type: string, stored: Readonly<Record<string, Identifier>>): Promise<void> {
      for (const [note, identifier] of Object.entries(stored)) await publish(generic.url, type, identifier, note);
    }

    /** Matching is by topic: the values in sorted-key order, the same number of tokens. */
    const tokensStored: Record<string, Identifier> = {
      'a=x b=2': { a: 'x', b: '2' },
      'b=2 a=x (keys reversed)': { b: '2', a: 'x' },
      'a=2 b=x (values swapped)': { a: '2', b: 'x' },
      'a=x b=3': { a: 'x', b: '3' },
      'a=x b=2 c=z (one more token)': { a: 'x', b: '2', c: 'z' },
      'b=2 (one token fewer)': { b: '2' },
      'a=x c=2 (other key)': { a: 'x', c: '2' },
    };
    const wildcardStored: Record<string, Identifier> = {
      'a=x b=2': { a: 'x', b: '2' },
      'a=y b=2': { a: 'y', b: '2' },
      'a=x b=3': { a: 'x', b: '3' },
      'a=x b=2 c=z': { a: 'x', b: '2', c: 'z' },
    };

    it('replay: topic tokens follow the sorted keys, whatever order the request names them in', async () => {
      const type = eventType();
      await storeGeneric(type, tokensStored);
      const client = await open(generic.url, '/api/v1/replay', { event_type: type, identifier: { b: '2', a: 'x' }, from_id: '0' });
      const events = withoutHeartbeats(await client.rest());
      expect(events[0]?.json.topic).toBe(`${type}.x.2`);
      expect(events.map(frameLabel).slice(-2)).toEqual(['replay_completed', 'end_of_stream']);
      if (backend.kind === 'jetstream') {
        // One notification per exact topic on a schema-less JetStream stream (docs/design/rules/backends.md §7.4, B10):
        // all three matching notifications share the topic <type>.x.2, so each replaced the one
        // before and only the last is replayed, after the gap that says so (D42); the others are
        // on other topics and do not match.
        expect(events.slice(1, -2).map((event) => (event.json.type === 'history_gap' ? 'history_gap' : 'notification'))).toEqual([
          'history_gap',
          'notification',
        ]);
        expect(events[1]?.json).toMatchObject({ first_sequence: 1, lost: null, scope: 'request' });
        expect(notes(events.slice(2, -2))).toEqual(['a=x c=2 (other key)']);
      } else {
        expect(notes(events.slice(1, -2))).toEqual(['a=x b=2', 'b=2 a=x (keys reversed)', 'a=x c=2 (other key)']);
      }
    });

    it('live: topic tokens follow the sorted keys, whatever order the request names them in', async () => {
      const type = eventType();
      const client = await watchLive(generic.url, { event_type: type, identifier: { b: '2', a: 'x' } });
      await storeGeneric(type, tokensStored);
      await publish(generic.url, type, { a: 'x', b: '2' }, SENTINEL);
      expect(notes(await untilSentinel(client))).toEqual(['a=x b=2', 'b=2 a=x (keys reversed)', 'a=x c=2 (other key)', SENTINEL]);
    });

    it('replay: "*" is a wildcard for one token', async () => {
      const type = eventType();
      await storeGeneric(type, wildcardStored);
      const client = await open(generic.url, '/api/v1/replay', { event_type: type, identifier: { a: '*', b: '2' }, from_id: '0' });
      const events = withoutHeartbeats(await client.rest());
      expect(events[0]?.json.topic).toBe(`${type}.*.2`);
      expect(notes(events.slice(1, -2))).toEqual(['a=x b=2', 'a=y b=2']);
    });

    it('live: "*" is a wildcard for one token', async () => {
      const type = eventType();
      const client = await watchLive(generic.url, { event_type: type, identifier: { a: '*', b: '2' } });
      await storeGeneric(type, wildcardStored);
      await publish(generic.url, type, { a: 'q', b: '2' }, SENTINEL);
      expect(notes(await untilSentinel(client))).toEqual(['a=x b=2', 'a=y b=2', SENTINEL]);
    });

    it('JSON numbers and booleans are the same tokens as their text', async () => {
      const type = eventType();
      await storeGeneric(type, {
        'n=5 flag=true': { n: 5, flag: true },
        'n=5 flag=false': { n: '5', flag: 'false' },
        'n=6 flag=true': { n: '6', flag: 'true' },
      });
      const events = await replayAll(generic.url, { event_type: type, identifier: { flag: 'true', n: '5' } });
      expect(notes(events)).toEqual(['n=5 flag=true']);
    });

    it('a value containing a dot stays one token (percent-encoded), distinct from two tokens', async () => {
      const type = eventType();
      await storeGeneric(type, { 'a=x.y': { a: 'x.y' }, 'a=x b=y': { a: 'x', b: 'y' }, 'a=x.z': { a: 'x.z' } });
      const oneToken = await replayAll(generic.url, { event_type: type, identifier: { a: 'x.y' } });
      expect(notes(oneToken)).toEqual(['a=x.y']);
      const twoTokens = await replayAll(generic.url, { event_type: type, identifier: { a: 'x', b: 'y' } });
      expect(notes(twoTokens)).toEqual(['a=x b=y']);
    });

    it('a generic polygon is a topic token, and a polygon filter matches nothing (no stored geometry)', async () => {
      const type = eventType();
      await storeGeneric(type, { square: { polygon: SQUARE } });
      expect(notes(await replayAll(generic.url, { event_type: type, identifier: { polygon: SQUARE } }))).toEqual([]);
      expect(notes(await replayAll(generic.url, { event_type: type, identifier: { polygon: '*' } }))).toEqual(['square']);
    });

    it('renders CloudEvents with id <event_type>@<sequence>, the sequence from_id resumes at', async () => {
      const type = eventType();
      await storeGeneric(type, { first: { k: 'v' }, second: { k: 'v' } });
      const all = await replayAll(generic.url, { event_type: type, identifier: { k: 'v' } });
      const ids = all.map((event) => event.json.id as string);
      const pattern = new RegExp(`^${type}@([1-9][0-9]*)$`);
      for (const id of ids) expect(id).toMatch(pattern);
      let first: number | undefined;
      let second: number | undefined;
      if (backend.kind === 'jetstream') {
        // Both share the exact topic <type>.v, and a schema-less JetStream stream keeps one
        // notification per exact topic (docs/design/rules/backends.md §7.4, B10): "second" replaced "first". The
        // type's stream was created for "first" (docs/design/rules/backends.md §7.3), and a new stream numbers from 1 (docs/design/rules/backends.md §4).
        expect(notes(all)).toEqual(['second']);
        first = 1;
        second = Number(pattern.exec(ids[0] ?? '')?.[1]);
      } else {
        expect(notes(all)).toEqual(['first', 'second']);
        [first, second] = ids.map((id) => Number(pattern.exec(id)?.[1]));
      }
      expect(second).toBe((first as number) + 1);
      expect(all[0]?.json.type).toBe(`int.ecmwf.aviso.${type}`);
      expect(identifierOf(all[0])).toEqual({ k: 'v' });

      const resumed = await open(generic.url, '/api/v1/replay', { event_type: type, identifier: { k: 'v' }, from_id: String(second) });
      const events = withoutHeartbeats(await resumed.rest());
      expect(events.map(frameLabel)).toEqual(['replay_started', `${type}@${second}`, 'replay_completed', 'end_of_stream']);
    });

    it('renders live CloudEvents with id <event_type>@<sequence>', async () => {
      const type = eventType();
      const client = await watchLive(generic.url, { event_type: type, identifier: { k: 'v' } });
      await publish(generic.url, type, { k: 'v' }, SENTINEL);
      const [event] = await untilSentinel(client);
      expect(event?.json.id).toMatch(new RegExp(`^${type}@[1-9][0-9]*$`));
      expect(identifierOf(event)).toEqual({ k: 'v' });
    });

    it('schema-backed event types keep their schema in a non-strict server', async () => {
      const runTime = uniqueTime();
      await publish(
        generic.url,
        'extreme_event',
        { region: 'north', run_time: runTime, severity: '3', anomaly: '1', polygon: SQUARE },
        'three',
      );
      await publish(
        generic.url,
        'extreme_event',
        { region: 'north', run_time: runTime, severity: '6', anomaly: '1', polygon: SQUARE },
        'six',
      );
      const events = await replayAll(generic.url, {
        event_type: 'extreme_event',
        identifier: { region: 'NORTH', run_time: runTime, severity: { gt: 4 } },
      });
      expect(notes(events)).toEqual(['six']);
    });
  });
});
