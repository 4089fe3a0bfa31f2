import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UUID_V4, postJson } from '../support/http.js';
import { BACKEND_KINDS, BackendUnderTest } from '../support/backends.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { withoutHeartbeats, type SseClient, type SseEvent } from '../support/sse-client.js';
import { trackProcesses } from '../support/tracked-processes.js';
import { frameLabel } from '../support/transcript.js';

/**
 * Coordinates as JSON arrays (docs/design/rules/reference-0.13.md §3, D27, replacing D14 for geometry), against the
 * real server process on both backends: notify, watch and replay accept a polygon as
 * `[[lat,lon],…]`, as a string holding that JSON or as the legacy text, and a point as `[lat,lon]`
 * or `"lat,lon"`; every CloudEvent, live and replayed, carries the polygon as the canonical array
 * whatever form the producer sent. The array error messages are checked byte for byte with their
 * endpoint's code; notify also takes typed JSON numbers for Int and Float fields (docs/design/rules/reference-0.13.md §9).
 */

type Endpoint = 'notification' | 'watch' | 'replay';
const CODE: Record<Endpoint, string> = {
  notification: 'INVALID_NOTIFICATION_REQUEST',
  watch: 'INVALID_WATCH_REQUEST',
  replay: 'INVALID_REPLAY_REQUEST',
};
const LABEL: Record<Endpoint, string> = {
  notification: 'Invalid Notification Request',
  watch: 'Invalid Watch Request',
  replay: 'Invalid Replay Request',
};

const POLYGON_PREFIX = "field 'polygon' must be a valid polygon: ";
const POINT_ARRAY_PREFIX = 'identifier.point must be a valid [lat,lon] coordinate pair or compatible string: ';
const SQUARE_ARRAY = [
  [50, 10],
  [52, 10],
  [52, 12],
  [50, 12],
  [50, 10],
];
/** The same square as the producer may write it: legacy text with float literals, and JSON in a string. */
const SQUARE_TEXT = '(50.0,10.0,52.0,10.0,52.0,12.0,50.0,12.0,50.0,10.0)';
const SQUARE_JSON_TEXT = '[[50.0,10.0],[52.0,10.0],[52.0,12.0],[50.0,12.0],[50.0,10.0]]';
const FAR_AWAY = [
  [10, 10],
  [10.2, 10],
  [10.2, 10.2],
  [10, 10.2],
  [10, 10],
];

const tracked = trackProcesses();

let dates = 0;
/** A date no other test uses, so each test sees only its own notifications. */
function uniqueDate(): string {
  dates += 1;
  return new Date(Date.UTC(2031, 0, 1) + dates * 86_400_000).toISOString().slice(0, 10).replaceAll('-', '');
}

function noteOf(event: SseEvent | undefined): unknown {
  return (event?.json.data as { payload?: { note?: unknown } } | undefined)?.payload?.note;
}

function identifierOf(event: SseEvent | undefined): Record<string, unknown> | undefined {
  return (event?.json.data as { identifier?: Record<string, unknown> } | undefined)?.identifier;
}

describe.each(BACKEND_KINDS)('on the %s backend', (kind) => {
  const backend = new BackendUnderTest(kind);
  let server: RunningServer;
  beforeAll(async () => {
    await backend.start();
    server = await startServer({ config: backend.config() });
  });
  afterAll(async () => {
    if (server !== undefined) await server.stop();
    await backend.stop();
  });

  async function notify(identifier: Record<string, unknown> | string, note: string, eventType = 'test_polygon') {
    const body =
      typeof identifier === 'string'
        ? `{"event_type":"${eventType}","identifier":${identifier},"payload":{"note":"${note}"}}`
        : { event_type: eventType, identifier, payload: { note } };
    const response = await postJson(`${server.url}/api/v1/notification`, body);
    expect(response.status, `notify ${note}: ${response.text}`).toBe(200);
  }

  async function open(endpoint: 'watch' | 'replay', body: Record<string, unknown>): Promise<SseClient> {
    const client = await tracked.open(server, `/api/v1/${endpoint}`, body);
    expect(client.status, client.errorBody).toBe(200);
    return client;
  }

  async function replay(identifier: Record<string, unknown>): Promise<SseEvent[]> {
    const client = await open('replay', { event_type: 'test_polygon', identifier, from_id: '0' });
    const events = withoutHeartbeats(await client.rest());
    expect(events.map(frameLabel).slice(-2)).toEqual(['replay_completed', 'end_of_stream']);
    return events.slice(1, -2);
  }

  async function watchLive(identifier: Record<string, unknown>): Promise<SseClient> {
    const client = await open('watch', { event_type: 'test_polygon', identifier });
    expect((await client.next())?.json.type).toBe('connection_established');
    return client;
  }

  async function liveNotes(client: SseClient, count: number): Promise<SseEvent[]> {
    const events: SseEvent[] = [];
    while (events.length < count) {
      const event = await client.nextSignificant();
      if (!event) throw new Error(`stream ended after ${events.length} notifications`);
      expect(event.event).toBe('live-notification');
      events.push(event);
    }
    return events;
  }

  describe('notify, then watch and replay, with arrays', () => {
    it('accepts a polygon as an array, as a string holding JSON and as the legacy text', async () => {
      const date = uniqueDate();
      await notify({ date, time: '1200', polygon: SQUARE_ARRAY }, 'array');
      await notify({ date, time: '1200', polygon: SQUARE_JSON_TEXT }, 'json text');
      await notify({ date, time: '1200', polygon: SQUARE_TEXT }, 'text');
      expect((await replay({ date, time: '1200', polygon: '*' })).map(noteOf)).toEqual(['array', 'json text', 'text']);
    });

    it.each([
      ['an array point', { point: [51, 11] }],
      ['a point string holding JSON', { point: '[51, 11]' }],
      [
        'an array polygon',
        {
          polygon: [
            [51, 11],
            [53, 11],
            [53, 13],
            [51, 13],
            [51, 11],
          ],
        },
      ],
      ['a polygon string holding JSON', { polygon: '[[51,11],[53,11],[53,13],[51,13],[51,11]]' }],
    ])('replay with %s matches the polygons it should, whatever form they were sent in', async (_name, filter) => {
      const date = uniqueDate();
      await notify({ date, polygon: SQUARE_TEXT, time: '0000' }, 'text');
      await notify({ date, polygon: FAR_AWAY, time: '0000' }, 'far away');
      await notify({ date, polygon: SQUARE_ARRAY, time: '0000' }, 'array');
      expect((await replay({ date, ...filter })).map(noteOf)).toEqual(['text', 'array']);
    });

    it.each([
      ['an array point', { point: [51, 11] }],
      [
        'an array polygon',
        {
          polygon: [
            [51, 11],
            [53, 11],
            [53, 13],
            [51, 13],
            [51, 11],
          ],
        },
      ],
    ])('a live watch with %s matches the polygons it should', async (_name, filter) => {
      const date = uniqueDate();
      const client = await watchLive({ date, ...filter });
      await notify({ date, polygon: SQUARE_ARRAY, time: '0000' }, 'array');
      await notify({ date, polygon: FAR_AWAY, time: '0000' }, 'far away');
      await notify({ date, polygon: SQUARE_TEXT, time: '0000' }, 'text');
      expect((await liveNotes(client, 2)).map(noteOf)).toEqual(['array', 'text']);
    });

    it('a point-cloud subscriber polygon may be an array', async () => {
      const date = uniqueDate();
      await notify(
        {
          date,
          point_cloud: [
            [0, 0],
            [51, 11],
          ],
        },
        'inside',
        'sensor_cloud',
      );
      await notify({ date, point_cloud: [[0, 0]] }, 'outside', 'sensor_cloud');
      const client = await open('replay', { event_type: 'sensor_cloud', identifier: { date, polygon: SQUARE_ARRAY }, from_id: '0' });
      const [event, ...others] = withoutHeartbeats(await client.rest()).slice(1, -2);
      expect([noteOf(event), ...others.map(noteOf)]).toEqual(['inside']);
      // The point cloud stays its canonical array.
      expect(identifierOf(event)).toEqual({
        date,
        point_cloud: [
          [0, 0],
          [51, 11],
        ],
      });
    });
  });

  describe('the CloudEvent polygon is the canonical array (D27)', () => {
    const FORMS: readonly (readonly [string, unknown])[] = [
      ['legacy text', SQUARE_TEXT],
      ['legacy text with spaces', ' ( 50 , 10 , 52,10, 52,12, 50,12, 50,10 ) '],
      ['array with float literals', 'RAW'],
      ['a string holding JSON', SQUARE_JSON_TEXT],
    ];

    /** Publishes the square in every form; the float-literal array goes as raw JSON text to keep `50.0`. */
    async function publishEveryForm(date: string): Promise<void> {
      for (const [note, polygon] of FORMS) {
        if (polygon === 'RAW') {
          await notify(`{"date":"${date}","time":"0600","polygon":[[50.0,10.0],[52.0,10],[52,12.0],[50,12],[50.0,10.0]]}`, note);
        } else {
          await notify({ date, time: '0600', polygon }, note);
        }
      }
    }

    function expectCanonical(events: readonly SseEvent[], date: string): void {
      expect(events.map(noteOf)).toEqual(FORMS.map(([note]) => note));
      for (const event of events) {
        expect(identifierOf(event)).toEqual({ date, polygon: SQUARE_ARRAY, time: '0600' });
        expect(event.data).toContain('"polygon":[[50,10],[52,10],[52,12],[50,12],[50,10]]');
      }
    }

    it('in replay', async () => {
      const date = uniqueDate();
      await publishEveryForm(date);
      expectCanonical(await replay({ date, point: '51,11' }), date);
    });

    it('live', async () => {
      const date = uniqueDate();
      const client = await watchLive({ date, polygon: SQUARE_TEXT });
      await publishEveryForm(date);
      const events = await liveNotes(client, FORMS.length);
      for (const event of events) expect(event.event).toBe('live-notification');
      expectCanonical(events, date);
    });
  });

  describe('typed JSON on notify (docs/design/rules/reference-0.13.md §9)', () => {
    it('takes JSON numbers for Int and Float fields, delivered as canonical strings', async () => {
      const runTime = '1717';
      const response = await postJson(
        `${server.url}/api/v1/notification`,
        `{"event_type":"extreme_event","identifier":{"region":"east","run_time":"${runTime}","severity":7,"anomaly":42.50,"polygon":${JSON.stringify(SQUARE_ARRAY)}},"payload":null}`,
      );
      expect(response.status, response.text).toBe(200);
      const client = await open('replay', {
        event_type: 'extreme_event',
        identifier: { region: 'east', run_time: runTime, severity: 7, anomaly: 42.5 },
        from_id: '0',
      });
      const [event] = withoutHeartbeats(await client.rest()).slice(1, -2);
      expect(identifierOf(event)).toEqual({ anomaly: '42.5', polygon: SQUARE_ARRAY, region: 'east', run_time: runTime, severity: '7' });
    });
  });

  describe('array error messages, byte for byte', () => {
    async function expectRejected(endpoint: Endpoint, body: Record<string, unknown>, message: string): Promise<void> {
      const response = await postJson(`${server.url}/api/v1/${endpoint}`, body);
      const requestId = response.headers.get('x-request-id');
      expect(requestId).toMatch(UUID_V4);
      expect(response.status).toBe(400);
      expect(response.text).toBe(
        JSON.stringify({ code: CODE[endpoint], details: message, error: LABEL[endpoint], message, request_id: requestId }),
      );
    }

    const bodyFor = (endpoint: Endpoint, identifier: Record<string, unknown>): Record<string, unknown> =>
      endpoint === 'notification'
        ? { event_type: 'test_polygon', identifier: { date: '20250706', time: '1200', ...identifier }, payload: 1 }
        : { event_type: 'test_polygon', identifier, from_id: '0' };

    const POLYGON_CASES: readonly (readonly [unknown, string])[] = [
      [[[0, 0], [0, 1], [1, 1], [0]], 'polygon point 3 is invalid: coordinate must be a two-element array [lat,lon]'],
      [
        [
          [0, 0],
          ['0', 1],
          [1, 1],
          [0, 0],
        ],
        'polygon point 1 is invalid: latitude must be a number',
      ],
      [
        [
          [0, 0],
          [0, 1],
          [91, 1],
          [0, 0],
        ],
        'polygon point 2 is invalid: latitude 91 is outside the valid range [-90, 90]',
      ],
      [
        [
          [0, 0],
          [0, 181],
          [1, 1],
          [0, 0],
        ],
        'polygon point 1 is invalid: longitude 181 is outside the valid range [-180, 180]',
      ],
      ['[[0,0],[0,1],[1,true],[0,0]]', 'polygon point 2 is invalid: longitude must be a number'],
      ['[[0,0],[0,1],[1,1],[0,0]', 'polygon must be an array of [lat,lon] points or a compatible string'],
      [
        [
          [0, 0],
          [0, 1],
          [0, 0],
        ],
        'polygon must have at least 4 coordinate pairs (3 unique vertices plus a closing repeat of the first vertex)',
      ],
      [
        [
          [0, 0],
          [0, 1],
          [1, 1],
          [1, 0],
        ],
        'polygon must be closed (first and last coordinates must be identical)',
      ],
      // The legacy string form keeps its messages.
      ['(0,0,0,1,1,1,1,0)', 'polygon must be closed (first and last coordinates must be identical)'],
    ];

    describe.each(['notification', 'watch', 'replay'] as const)('%s', (endpoint) => {
      it.each(POLYGON_CASES)('rejects the polygon %j', async (polygon, reason) => {
        await expectRejected(endpoint, bodyFor(endpoint, { polygon }), POLYGON_PREFIX + reason);
      });
    });

    describe.each(['watch', 'replay'] as const)('%s', (endpoint) => {
      it.each([
        [[51], 'coordinate must be a two-element array [lat,lon]'],
        [[51, 11, 0], 'coordinate must be a two-element array [lat,lon]'],
        ['[51, 11', 'coordinate must be a two-element array [lat,lon]'],
        [['51', 11], 'latitude must be a number'],
        ['[51, "11"]', 'longitude must be a number'],
        [[-91, 11], 'latitude -91 is outside the valid range [-90, 90]'],
        [[51, 200.5], 'longitude 200.5 is outside the valid range [-180, 180]'],
      ])('rejects the point %j', async (point, reason) => {
        await expectRejected(endpoint, bodyFor(endpoint, { point }), POINT_ARRAY_PREFIX + reason);
      });

      it('keeps the legacy point message for the text form', async () => {
        await expectRejected(
          endpoint,
          bodyFor(endpoint, { point: '91,0' }),
          "identifier.point must be a valid 'lat,lon' coordinate pair: Latitude out of range [-90, 90]: 91",
        );
      });
    });
  });
});
