import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UUID_V4, request } from '../support/http.js';
import { serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient } from '../support/sse-client.js';

/**
 * Every 400 of POST /api/v1/watch and /api/v1/replay, against the real server process (docs/design/rules/api.md §3,
 * docs/design/rules/api.md §4, docs/design/rules/api.md §6.1, docs/design/rules/api.md §7, docs/design/rules/api.md §9; docs/design/rules/schema-and-validation.md §5.10, §6.2, §8.4; D6, D21). Each rejection is
 * checked byte for byte (error bodies are compact JSON with sorted keys, D1), with `request_id`
 * equal to the `X-Request-ID` header, and no event stream is started.
 */

type Endpoint = 'watch' | 'replay';
const ENDPOINTS: readonly Endpoint[] = ['watch', 'replay'];
const LABEL: Record<Endpoint, string> = { watch: 'Invalid Watch Request', replay: 'Invalid Replay Request' };
const CODE: Record<Endpoint, string> = { watch: 'INVALID_WATCH_REQUEST', replay: 'INVALID_REPLAY_REQUEST' };

const POLYGON = '(52.5,13.4,52.6,13.5,52.5,13.6,52.4,13.5,52.5,13.4)';
const CONFIGURED = ['dissemination', 'extreme_event', 'mars', 'sensor_cloud', 'test_polygon'];
const REPLAY_NEEDS_CURSOR =
  'Replay endpoint requires either from_id or from_date parameter. Use from_id for sequence-based replay or from_date for time-based replay.';
const BOTH_CURSORS =
  'Cannot specify both from_id and from_date. Please provide only one replay parameter. Use from_id for sequence-based replay or from_date for time-based replay.';
const FROM_ID_EMPTY = 'from_id cannot be empty. Provide a valid sequence number or omit the field';
const FROM_DATE_EMPTY = 'from_date cannot be empty. Provide a valid datetime/timestamp or omit the field';
const BOTH_SPATIAL = 'Cannot specify both identifier.polygon and identifier.point. Provide only one spatial filter.';
const POINT_PREFIX = "identifier.point must be a valid 'lat,lon' coordinate pair: ";
const UNRECOGNISED_DATE = 'expected ISO-8601 datetime (RFC3339/space-separated with optional timezone) or unix epoch seconds/milliseconds';

const invalidFromId = (value: string): string =>
  `from_id must be a valid positive integer. Got: '${value}'. Valid examples: '1', '123', '9999'`;
const invalidFromDate = (value: string, reason: string): string =>
  `from_date must be a valid datetime/timestamp. Got: '${value}'. Error: ${reason}. ` +
  "Valid examples: '2025-06-09T13:15:00Z', '2025-06-09 13:15:00+00:00', '2025-06-09 13:15:00', '1740509903', '1740509903710'";

/** A valid extreme_event identifier for watch and replay. */
const EXTREME = { region: 'north', run_time: '1200', severity: '4' };

let server: RunningServer;
let generic: RunningServer;
beforeAll(async () => {
  [server, generic] = await Promise.all([
    startServer({ config: serverConfig() }),
    startServer({ config: serverConfig({ notification_schema_strict: false }) }),
  ]);
});
afterAll(async () => {
  await Promise.all([server.stop(), generic.stop()]);
});

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

/** POSTs a body; an event stream, should one start, is cut off and reported as such. */
async function post(base: string, endpoint: Endpoint, body: unknown): Promise<Answer> {
  const controller = new AbortController();
  const response = await fetch(`${base}/api/v1/${endpoint}`, {
    method: 'POST',
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: controller.signal,
  });
  if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    controller.abort();
    return { status: response.status, headers: response.headers, text: '<an event stream started>' };
  }
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** The answer is a 400 with exactly this shape-A body, and no stream. */
function expectShapeA(answer: Answer, endpoint: Endpoint, code: string, message: string, details = message): void {
  const requestId = answer.headers.get('x-request-id');
  expect(requestId).toMatch(UUID_V4);
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  expect(answer.text).toBe(JSON.stringify({ code, details, error: LABEL[endpoint], message, request_id: requestId }));
  expect(answer.status).toBe(400);
}

async function expectRejected(endpoint: Endpoint, body: unknown, message: string, details = message, base = server.url) {
  expectShapeA(await post(base, endpoint, body), endpoint, CODE[endpoint], message, details);
}

/** Replay needs a start cursor before identifier validation is reached; watch takes one too. */
const withCursor = (body: Record<string, unknown>): Record<string, unknown> => ({ ...body, from_id: '0' });

describe.each(ENDPOINTS)('%s: start cursors', (endpoint) => {
  it.each([[''], ['   ']])('rejects an empty from_id %j', async (fromId) => {
    await expectRejected(endpoint, { event_type: 'extreme_event', identifier: EXTREME, from_id: fromId }, FROM_ID_EMPTY);
  });

  it.each([['-1'], ['1.5'], [' 5'], ['5 '], ['mars@5'], ['extreme_event@5'], ['0x10'], ['18446744073709551616'], ['1e3']])(
    'rejects the malformed from_id %j',
    async (fromId) => {
      await expectRejected(endpoint, { event_type: 'extreme_event', identifier: EXTREME, from_id: fromId }, invalidFromId(fromId));
    },
  );

  it.each([[''], ['  ']])('rejects an empty from_date %j', async (fromDate) => {
    await expectRejected(endpoint, { event_type: 'extreme_event', identifier: EXTREME, from_date: fromDate }, FROM_DATE_EMPTY);
  });

  it.each([['2025-06-09'], ['not-a-date'], ['2025-06-09T13:15:00+2'], ['13:15']])(
    'rejects the malformed from_date %j',
    async (fromDate) => {
      await expectRejected(
        endpoint,
        { event_type: 'extreme_event', identifier: EXTREME, from_date: fromDate },
        invalidFromDate(fromDate, UNRECOGNISED_DATE),
      );
    },
  );

  it('rejects a negative unix timestamp as from_date', async () => {
    await expectRejected(
      endpoint,
      { event_type: 'extreme_event', identifier: EXTREME, from_date: '-1' },
      invalidFromDate('-1', "negative unix timestamps are not supported: '-1'"),
    );
  });

  it('quotes a negative timestamp untrimmed after Got: and trimmed in the reason', async () => {
    await expectRejected(
      endpoint,
      { event_type: 'extreme_event', identifier: EXTREME, from_date: ' -5 ' },
      invalidFromDate(' -5 ', "negative unix timestamps are not supported: '-5'"),
    );
  });

  it('rejects from_id and from_date together', async () => {
    await expectRejected(
      endpoint,
      { event_type: 'extreme_event', identifier: EXTREME, from_id: '1', from_date: '2025-06-09T13:15:00Z' },
      BOTH_CURSORS,
    );
  });

  it('reports a malformed from_id even when from_date is also present', async () => {
    await expectRejected(
      endpoint,
      { event_type: 'extreme_event', identifier: EXTREME, from_id: '-1', from_date: '2025-06-09T13:15:00Z' },
      invalidFromId('-1'),
    );
  });

  it('reports a malformed from_id before a malformed from_date', async () => {
    await expectRejected(endpoint, { event_type: 'extreme_event', identifier: EXTREME, from_id: 'x', from_date: 'y' }, invalidFromId('x'));
  });

  it('reports a malformed from_date even when a valid from_id is also present', async () => {
    await expectRejected(
      endpoint,
      { event_type: 'extreme_event', identifier: EXTREME, from_id: '1', from_date: 'not-a-date' },
      invalidFromDate('not-a-date', UNRECOGNISED_DATE),
    );
  });

  it('checks the start cursor before the identifier', async () => {
    await expectRejected(
      endpoint,
      { event_type: 'extreme_event', identifier: { colour: 'red' }, from_id: 'mars@5' },
      invalidFromId('mars@5'),
    );
  });
});

describe('accepted start cursors (controls for the rejections above)', () => {
  async function replayStarted(body: Record<string, unknown>): Promise<{ raw: string; json: Record<string, unknown> }> {
    const client = await SseClient.open(`${server.url}/api/v1/replay`, {
      event_type: 'extreme_event',
      identifier: EXTREME,
      ...body,
    });
    expect(client.status, client.errorBody).toBe(200);
    const first = await client.next();
    expect(first?.json.type).toBe('replay_started');
    await client.rest();
    return { raw: client.raw, json: first?.json ?? {} };
  }

  it.each([
    ['+1', 1],
    ['007', 7],
    ['0', 0],
  ])('accepts from_id %j as sequence %d', async (fromId, sequence) => {
    const { json } = await replayStarted({ from_id: fromId });
    expect(json.from_sequence).toBe(sequence);
    expect(json.from_date).toBeNull();
  });

  it('accepts the largest u64 from_id and echoes it exactly', async () => {
    const { raw } = await replayStarted({ from_id: '18446744073709551615' });
    expect(raw).toContain('"from_sequence":18446744073709551615,');
  });

  it.each([
    ['2025-01-15T10:00:00Z', '2025-01-15T10:00:00Z'],
    [' 2025-01-15T10:00:00Z ', '2025-01-15T10:00:00Z'],
    ['2025-01-15T10:00:00.5+02:00', '2025-01-15T08:00:00Z'],
    ['2025-01-15 10:00:00+00:00', '2025-01-15T10:00:00Z'],
    ['2025-01-15 10:00:00+0100', '2025-01-15T09:00:00Z'],
    ['2025-01-15T10:00:00', '2025-01-15T10:00:00Z'],
    ['2025-01-15 10:00:00.123', '2025-01-15T10:00:00Z'],
    ['1740509903', '2025-02-25T18:58:23Z'],
    ['+1740509903', '2025-02-25T18:58:23Z'],
    ['10000000000', '2286-11-20T17:46:40Z'],
    ['946684800000', '2000-01-01T00:00:00Z'],
    ['1000000000000', '2001-09-09T01:46:40Z'],
  ])('accepts from_date %j as %s', async (fromDate, echoed) => {
    const { json } = await replayStarted({ from_date: fromDate });
    expect(json.from_date).toBe(echoed);
    expect(json.from_sequence).toBeNull();
  });
});

describe('replay without a start cursor', () => {
  it('is rejected', async () => {
    await expectRejected('replay', { event_type: 'extreme_event', identifier: EXTREME }, REPLAY_NEEDS_CURSOR);
  });

  it('is rejected when both cursors are null (null counts as absent)', async () => {
    await expectRejected(
      'replay',
      { event_type: 'extreme_event', identifier: EXTREME, from_id: null, from_date: null },
      REPLAY_NEEDS_CURSOR,
    );
  });

  it('is reported before identifier problems', async () => {
    await expectRejected('replay', { event_type: 'extreme_event', identifier: { colour: 'red' } }, REPLAY_NEEDS_CURSOR);
  });
});

describe.each(ENDPOINTS)('%s: spatial filter shape', (endpoint) => {
  it('rejects polygon together with point', async () => {
    await expectRejected(
      endpoint,
      withCursor({ event_type: 'test_polygon', identifier: { time: '1200', polygon: POLYGON, point: '52.55,13.5' } }),
      BOTH_SPATIAL,
    );
  });

  it('reports polygon with point before a malformed start cursor', async () => {
    await expectRejected(
      endpoint,
      { event_type: 'test_polygon', identifier: { polygon: POLYGON, point: '52.55,13.5' }, from_id: '-1', from_date: '' },
      BOTH_SPATIAL,
    );
  });

  it('reports an invalid point before a malformed start cursor', async () => {
    await expectRejected(
      endpoint,
      { event_type: 'test_polygon', identifier: { point: '91,0' }, from_id: '1.5' },
      `${POINT_PREFIX}Latitude out of range [-90, 90]: 91`,
    );
  });

  it('rejects polygon with point on every event type, generic ones included', async () => {
    await expectRejected(
      endpoint,
      withCursor({ event_type: 'scratch', identifier: { polygon: POLYGON, point: '1,2' } }),
      BOTH_SPATIAL,
      BOTH_SPATIAL,
      generic.url,
    );
  });

  it.each([
    ['', 'Point coordinate string cannot be empty'],
    ['   ', 'Point coordinate string cannot be empty'],
    ['52.55', "Point must be in 'lat,lon' format"],
    [5, "Point must be in 'lat,lon' format"],
    ['1,2,3', "Point must contain exactly two values: 'lat,lon'"],
    ['north,13.5', 'Invalid latitude value: north'],
    ['52.55,east', 'Invalid longitude value: east'],
    ['91,0', 'Latitude out of range [-90, 90]: 91'],
    ['-90.5,0', 'Latitude out of range [-90, 90]: -90.5'],
    ['0,181', 'Longitude out of range [-180, 180]: 181'],
    ['(0,-180.5)', 'Longitude out of range [-180, 180]: -180.5'],
  ])('rejects the point %j', async (point, reason) => {
    await expectRejected(endpoint, withCursor({ event_type: 'test_polygon', identifier: { point } }), `${POINT_PREFIX}${reason}`);
  });

  it('rejects a point given as a constraint object', async () => {
    await expectRejected(
      endpoint,
      withCursor({ event_type: 'test_polygon', identifier: { point: { eq: '1,2' } } }),
      "identifier.point must be a scalar value: Field 'point' constraint object is not allowed in this operation",
    );
  });

  it('rejects an invalid point on a generic event type', async () => {
    await expectRejected(
      endpoint,
      withCursor({ event_type: 'scratch', identifier: { point: '1' } }),
      `${POINT_PREFIX}Point must be in 'lat,lon' format`,
      undefined,
      generic.url,
    );
  });

  it('rejects point on a schema without a polygon field (D21)', async () => {
    await expectRejected(
      endpoint,
      withCursor({ event_type: 'mars', identifier: { class: 'od', point: '52.55,13.5' } }),
      `Unknown field 'point' provided for ${endpoint} operation`,
    );
  });

  it('rejects point on a point-cloud schema', async () => {
    await expectRejected(
      endpoint,
      withCursor({ event_type: 'sensor_cloud', identifier: { date: '20250706', point: '52.55,13.5' } }),
      `Unknown field 'point' provided for ${endpoint} operation`,
    );
  });

  it('rejects polygon on a schema without a polygon field', async () => {
    await expectRejected(
      endpoint,
      withCursor({ event_type: 'mars', identifier: { class: 'od', polygon: POLYGON } }),
      `Unknown field 'polygon' provided for ${endpoint} operation`,
    );
  });

  it('rejects point_cloud sent by a subscriber', async () => {
    // The spec requires a 400 but gives no text; the message must at least name the field.
    const answer = await post(
      server.url,
      endpoint,
      withCursor({ event_type: 'sensor_cloud', identifier: { date: '20250706', point_cloud: [[52.5, 13.4]] } }),
    );
    expect(answer.status).toBe(400);
    const body = JSON.parse(answer.text) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['code', 'details', 'error', 'message', 'request_id']);
    expect(body).toMatchObject({ code: CODE[endpoint], error: LABEL[endpoint], request_id: answer.headers.get('x-request-id') });
    expect(body.message).toContain("'point_cloud'");
    expect(body.details).toBe(body.message);
  });

  it('rejects point_cloud sent by a subscriber even with a polygon', async () => {
    const answer = await post(
      server.url,
      endpoint,
      withCursor({ event_type: 'sensor_cloud', identifier: { date: '20250706', polygon: POLYGON, point_cloud: [[52.5, 13.4]] } }),
    );
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toMatchObject({ code: CODE[endpoint] });
  });

  it('rejects an invalid subscriber polygon with the polygon message', async () => {
    await expectRejected(
      endpoint,
      withCursor({ event_type: 'test_polygon', identifier: { polygon: '(52.5,13.4,52.6,13.5,52.5,13.6,52.4,13.5)' } }),
      "field 'polygon' must be a valid polygon: polygon must be closed (first and last coordinates must be identical)",
    );
  });
});

describe.each(ENDPOINTS)('%s: identifier names and presence', (endpoint) => {
  it('rejects an unknown identifier name on a schema-backed type (D6)', async () => {
    await expectRejected(
      endpoint,
      withCursor({ event_type: 'extreme_event', identifier: { ...EXTREME, colour: 'red' } }),
      `Unknown field 'colour' provided for ${endpoint} operation`,
    );
  });

  it('names the alphabetically first of several unknown names', async () => {
    await expectRejected(
      endpoint,
      withCursor({ event_type: 'mars', identifier: { class: 'od', zeta: '1', alpha: '2' } }),
      `Unknown field 'alpha' provided for ${endpoint} operation`,
    );
  });

  it('reports an unknown name before a missing required field', async () => {
    await expectRejected(
      endpoint,
      withCursor({ event_type: 'extreme_event', identifier: { colour: 'red' } }),
      `Unknown field 'colour' provided for ${endpoint} operation`,
    );
  });

  it.each([
    ['severity', { region: 'north', run_time: '1200' }],
    ['region', {}],
    ['run_time', { region: 'north', severity: '9' }],
  ])('rejects a missing required field (%s)', async (field, identifier) => {
    await expectRejected(
      endpoint,
      withCursor({ event_type: 'extreme_event', identifier }),
      `Required field '${field}' missing for ${endpoint} operation`,
    );
  });

  it('rejects a test_polygon watch with neither polygon nor point', async () => {
    await expectRejected(
      endpoint,
      withCursor({ event_type: 'test_polygon', identifier: { time: '1200' } }),
      `Required field 'polygon' missing for ${endpoint} operation`,
    );
  });

  it('rejects a point-cloud watch without a polygon', async () => {
    await expectRejected(
      endpoint,
      withCursor({ event_type: 'sensor_cloud', identifier: { date: '20250706' } }),
      `Required field 'point_cloud' missing for ${endpoint} operation`,
    );
  });

  it('validates a present value with its handler', async () => {
    await expectRejected(
      endpoint,
      withCursor({ event_type: 'extreme_event', identifier: { ...EXTREME, severity: '9' } }),
      "Field 'severity' value 9 is outside allowed range [1, 7]",
    );
  });

  it('reports an integer parse failure with the parser reason in details', async () => {
    await expectRejected(
      endpoint,
      withCursor({ event_type: 'extreme_event', identifier: { ...EXTREME, severity: 'four' } }),
      "Field 'severity' must be a valid integer, got: 'four'",
      'invalid digit found in string',
    );
  });

  it('reports a date failure at two levels', async () => {
    await expectRejected(
      endpoint,
      withCursor({ event_type: 'test_polygon', identifier: { date: '2025/07/06', polygon: POLYGON } }),
      "Failed to parse date value for field 'date'",
      "Field 'date' contains invalid date '2025/07/06'. Expected: YYYY-MM-DD, YYYYMMDD, or YYYY-DDD",
    );
  });

  it('rejects a null identifier value', async () => {
    await expectRejected(
      endpoint,
      withCursor({ event_type: 'extreme_event', identifier: { ...EXTREME, anomaly: null } }),
      "Field 'anomaly' cannot be null",
    );
  });

  it.each([
    ['run_time', { ...EXTREME, run_time: { eq: '1200' } }, 'extreme_event'],
    ['class', { class: { eq: 'od' } }, 'mars'],
    ['date', { date: { gte: '20250101' }, polygon: POLYGON }, 'test_polygon'],
    ['polygon', { polygon: { eq: POLYGON } }, 'test_polygon'],
    ['expver', { class: 'od', expver: { in: ['1'] } }, 'mars'],
  ])('rejects a constraint object on %s, whose handler has no operators', async (field, identifier, eventType) => {
    await expectRejected(
      endpoint,
      withCursor({ event_type: eventType, identifier }),
      `Field '${field}' does not support constraint filters; expected scalar value`,
    );
  });
});

describe.each(ENDPOINTS)('%s: constraint objects (docs/design/rules/schema-and-validation.md §8.4)', (endpoint) => {
  const cases: readonly (readonly [string, Record<string, unknown>, string])[] = [
    ['no operator', { severity: {} }, "Field 'severity' constraint must contain exactly one operator"],
    ['two operators', { severity: { gte: 4, lt: 7 } }, "Field 'severity' constraint must contain exactly one operator"],
    [
      'an unknown Int operator',
      { severity: { ge: 4 } },
      "Field 'severity' has invalid operator 'ge'. Allowed: eq,in,gt,gte,lt,lte,between",
    ],
    [
      'an upper-case operator',
      { severity: { GTE: 4 } },
      "Field 'severity' has invalid operator 'GTE'. Allowed: eq,in,gt,gte,lt,lte,between",
    ],
    [
      'an unknown Float operator',
      { anomaly: { near: 4 } },
      "Field 'anomaly' has invalid operator 'near'. Allowed: eq,in,gt,gte,lt,lte,between",
    ],
    [
      'an unknown Enum operator',
      { region: { gt: 'north' } },
      "Field 'region' has invalid operator 'gt'. Allowed for enum constraints: eq,in",
    ],
    ['an Int operand given as text', { severity: { eq: '4' } }, "Field 'severity' operator 'eq' expects integer value"],
    ['an Int operand with a fraction', { severity: { gte: 4.5 } }, "Field 'severity' operator 'gte' expects integer value"],
    ['an Int in that is not an array', { severity: { in: 4 } }, "Field 'severity' operator 'in' expects array of integers"],
    ['a Float operand given as text', { anomaly: { lt: '50' } }, "Field 'anomaly' operator 'lt' expects numeric value"],
    ['a Float operand that is a boolean', { anomaly: { gt: true } }, "Field 'anomaly' operator 'gt' expects numeric value"],
    ['a Float in that is not an array', { anomaly: { in: 5 } }, "Field 'anomaly' operator 'in' expects array of numbers"],
    ['an Enum operand that is not a string', { region: { eq: 5 } }, "Field 'region' operator 'eq' expects string value"],
    ['an Enum in that is not an array', { region: { in: 'north' } }, "Field 'region' operator 'in' expects array of strings"],
    ['an empty Int in', { severity: { in: [] } }, "Field 'severity' operator 'in' must contain at least one value"],
    ['an empty Float in', { anomaly: { in: [] } }, "Field 'anomaly' operator 'in' must contain at least one value"],
    ['an empty Enum in', { region: { in: [] } }, "Field 'region' operator 'in' must contain at least one value"],
    ['an Int between that is not an array', { severity: { between: 3 } }, "Field 'severity' operator 'between' expects [min,max]"],
    ['a Float between that is not an array', { anomaly: { between: 3 } }, "Field 'anomaly' operator 'between' expects [min,max]"],
    [
      'a between with three values',
      { severity: { between: [1, 2, 3] } },
      "Field 'severity' operator 'between' expects exactly two values [min,max]",
    ],
    ['a between with one value', { anomaly: { between: [1] } }, "Field 'anomaly' operator 'between' expects exactly two values [min,max]"],
    ['an Int between with min > max', { severity: { between: [6, 2] } }, "Field 'severity' operator 'between' expects min <= max"],
    ['a Float between with min > max', { anomaly: { between: [50.5, 50] } }, "Field 'anomaly' operator 'between' expects min <= max"],
    ['an Int operand above the range', { severity: { gte: 9 } }, "Field 'severity' constraint value 9 is outside allowed range [1, 7]"],
    [
      'an Int in-member below the range',
      { severity: { in: [2, 0] } },
      "Field 'severity' constraint value 0 is outside allowed range [1, 7]",
    ],
    [
      'an Int between bound outside the range',
      { severity: { between: [3, 8] } },
      "Field 'severity' constraint value 8 is outside allowed range [1, 7]",
    ],
    [
      'a Float operand outside the range',
      { anomaly: { lt: 150.5 } },
      "Field 'anomaly' constraint value 150.5 is outside allowed range [0, 100]",
    ],
    [
      'an Enum operand that is not allowed (reported lower-cased)',
      { region: { eq: 'NOWHERE' } },
      "Field 'region' has invalid enum value 'nowhere'. Allowed: [north, south, east, west]",
    ],
    [
      'an Enum in-member that is not allowed',
      { region: { in: ['north', 'Up'] } },
      "Field 'region' has invalid enum value 'up'. Allowed: [north, south, east, west]",
    ],
  ];

  it.each(cases)('rejects %s', async (_what, change, message) => {
    await expectRejected(endpoint, withCursor({ event_type: 'extreme_event', identifier: { ...EXTREME, ...change } }), message);
  });

  it('rejects an Int operand written as 4.0 (the literal is a float)', async () => {
    const body = `{"event_type":"extreme_event","identifier":{"region":"north","run_time":"1200","severity":{"eq":4.0}},"from_id":"0"}`;
    await expectRejected(endpoint, body, "Field 'severity' operator 'eq' expects integer value");
  });

  // docs/design/rules/schema-and-validation.md §8.4's "expects finite numeric value" cannot be reached over HTTP: JSON has no NaN or
  // infinity, and the only non-finite operand it can spell, an overflowing literal, is refused by
  // the JSON parser first (serde_json in the reference: "number out of range").
  it('rejects an overflowing Float operand (1e400) as INVALID_JSON', async () => {
    const body = `{"event_type":"extreme_event","identifier":{"region":"north","run_time":"1200","severity":"4","anomaly":{"lt":1e400}},"from_id":"0"}`;
    const answer = await post(server.url, endpoint, body);
    const parsed = JSON.parse(answer.text) as Record<string, unknown>;
    expect(parsed.message).toMatch(/^JSON parsing failed: ./);
    expectShapeA(answer, endpoint, 'INVALID_JSON', parsed.message as string);
  });

  it('rejects a scalar Float filter whose text overflows as not finite', async () => {
    await expectRejected(
      endpoint,
      withCursor({ event_type: 'extreme_event', identifier: { ...EXTREME, anomaly: '1e400' } }),
      "Field 'anomaly' must be a finite number, got: '1e400'",
    );
  });

  it('rejects a constraint object on a generic event type', async () => {
    await expectRejected(
      endpoint,
      withCursor({ event_type: 'scratch', identifier: { a: 'x', b: { gte: 1 } } }),
      "Field 'b' constraint object is not supported without schema",
      undefined,
      generic.url,
    );
  });
});

describe.each(ENDPOINTS)('%s: request body and event type', (endpoint) => {
  it('answers an unknown event type in strict mode with the sorted configured list and no details', async () => {
    const answer = await post(server.url, endpoint, withCursor({ event_type: 'asadasdasd', identifier: {} }));
    const requestId = answer.headers.get('x-request-id');
    expect(requestId).toMatch(UUID_V4);
    expect(answer.status).toBe(400);
    expect(answer.text).toBe(
      JSON.stringify({
        code: 'UNKNOWN_EVENT_TYPE',
        configured_event_types: CONFIGURED,
        error: 'unknown_event_type',
        message: "unknown event type 'asadasdasd'",
        request_id: requestId,
      }),
    );
  });

  it('compares event types case-sensitively', async () => {
    const answer = await post(server.url, endpoint, withCursor({ event_type: 'MARS', identifier: { class: 'od' } }));
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toMatchObject({ code: 'UNKNOWN_EVENT_TYPE', message: "unknown event type 'MARS'" });
  });

  it('applies the event-type gate before the spatial shape and the start cursor', async () => {
    const answer = await post(server.url, endpoint, {
      event_type: 'nope',
      identifier: { polygon: POLYGON, point: '1,2' },
      from_id: '-1',
    });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toMatchObject({ code: 'UNKNOWN_EVENT_TYPE', message: "unknown event type 'nope'" });
  });

  it.each([['not json'], [''], ['{"event_type":"mars"'], ['{"event_type":"mars","identifier":{}} trailing']])(
    'answers INVALID_JSON for %j',
    async (body) => {
      const answer = await post(server.url, endpoint, body);
      const parsed = JSON.parse(answer.text) as Record<string, unknown>;
      expect(parsed.message).toMatch(/^JSON parsing failed: ./);
      expectShapeA(answer, endpoint, 'INVALID_JSON', parsed.message as string);
    },
  );

  it('answers UNKNOWN_FIELD for a top-level key outside the five allowed names', async () => {
    const message =
      'Request contains unknown fields: Unknown field \'colour\' in request. Allowed fields: ["event_type", "identifier", "from_id", "from_date", "to_id", "to_date", "payload"]';
    expectShapeA(
      await post(server.url, endpoint, { event_type: 'mars', identifier: { class: 'od' }, colour: 'red', from_id: '0' }),
      endpoint,
      'UNKNOWN_FIELD',
      message,
    );
  });

  it('names the alphabetically first unknown top-level key', async () => {
    const answer = await post(server.url, endpoint, { zeta: 1, event_type: 'mars', identifier: {}, beta: 2 });
    expect(JSON.parse(answer.text)).toMatchObject({
      code: 'UNKNOWN_FIELD',
      message:
        'Request contains unknown fields: Unknown field \'beta\' in request. Allowed fields: ["event_type", "identifier", "from_id", "from_date", "to_id", "to_date", "payload"]',
    });
  });

  it.each([
    ['from_id as a JSON number', { event_type: 'mars', identifier: { class: 'od' }, from_id: 5 }],
    ['from_date as a JSON number', { event_type: 'mars', identifier: { class: 'od' }, from_date: 1740509903 }],
    ['a missing event_type', { identifier: { class: 'od' }, from_id: '0' }],
    ['a missing identifier', { event_type: 'mars', from_id: '0' }],
    ['a null identifier', { event_type: 'mars', identifier: null, from_id: '0' }],
    ['an array identifier', { event_type: 'mars', identifier: [], from_id: '0' }],
    ['a numeric event_type', { event_type: 5, identifier: {}, from_id: '0' }],
    ['a top level that is not an object', [{ event_type: 'mars' }]],
  ])('answers INVALID_REQUEST_SHAPE for %s', async (_what, body) => {
    const answer = await post(server.url, endpoint, body);
    const parsed = JSON.parse(answer.text) as Record<string, unknown>;
    expect(parsed.message).toMatch(/^Request deserialization failed: ./);
    expectShapeA(answer, endpoint, 'INVALID_REQUEST_SHAPE', parsed.message as string);
  });

  // GET is the browser form of the stream (docs/design/rules/browser.md §1, stream-get.test.ts); other methods are refused.
  it('answers DELETE with 405, an Allow header and a JSON body', async () => {
    const answer = await request(`${server.url}/api/v1/${endpoint}`, { method: 'DELETE' });
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toBe('GET, POST');
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.json.code).toBe('METHOD_NOT_ALLOWED');
    expect(answer.json.request_id).toBe(answer.headers.get('x-request-id'));
    expect(answer.headers.get('x-request-id')).toMatch(UUID_V4);
  });
});
