import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UUID_V4, postJson, request } from '../support/http.js';
import { MARS_EXAMPLE, serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';

let server: RunningServer;
const notify = (body: unknown, headers?: Record<string, string>) => postJson(`${server.url}/api/v1/notification`, body, headers);

const MARS = MARS_EXAMPLE;

beforeAll(async () => {
  server = await startServer({ config: serverConfig() });
});
afterAll(async () => {
  await server.stop();
});

describe('POST /api/v1/notification', () => {
  it('stores a valid notification and answers status, request_id, processed_at in that order', async () => {
    const response = await notify(MARS);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const requestId = response.headers.get('x-request-id');
    expect(requestId).toMatch(UUID_V4);
    expect(Object.keys(response.json)).toEqual(['status', 'request_id', 'processed_at']);
    expect(response.json.status).toBe('success');
    expect(response.json.request_id).toBe(requestId);
    expect(response.json.processed_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
  });

  it.each([['application/json'], ['text/plain'], ['application/x-www-form-urlencoded']])(
    'reads the body as JSON whatever the content type (%s)',
    async (type) => {
      expect((await notify(MARS, { 'content-type': type })).status).toBe(200);
    },
  );

  it('reads the body as JSON when no content type is sent', async () => {
    const response = await fetch(`${server.url}/api/v1/notification`, {
      method: 'POST',
      body: new Blob([JSON.stringify(MARS)]),
    });
    expect(response.status).toBe(200);
  });

  it.each([
    [{ step: { gte: 4 } }, "Field 'step' constraint object is not supported for notify operation"],
    [{ class: 'odd' }, "Field 'class' exceeds maximum length of 2 characters, got: 3"],
    [
      { domain: 'zz' },
      "Field 'domain' has invalid value 'zz'. Allowed: [a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, s, t, u, v, w, x, y, z]",
    ],
    [{ point: '52.5,13.4' }, 'identifier.point is only supported for watch/replay endpoints, not /notification'],
    [{ time: '25:00' }, "Field 'time' has invalid hours: 25. Hours must be 0-23 in 24-hour format"],
    [{ colour: 'red' }, "Unknown field 'colour' provided for notify operation"],
  ])('rejects %j with the exact message (docs/design/rules/api.md §5.3)', async (change, message) => {
    const response = await notify({ ...MARS, identifier: { ...MARS.identifier, ...change } });
    expect(response.status).toBe(400);
    expect(response.json).toEqual({
      code: 'INVALID_NOTIFICATION_REQUEST',
      details: message,
      error: 'Invalid Notification Request',
      message,
      request_id: response.headers.get('x-request-id'),
    });
  });

  it('requires every declared field on notify, whatever its required flag', async () => {
    const { step: _step, ...identifier } = MARS.identifier;
    const response = await notify({ ...MARS, identifier });
    expect(response.json.message).toBe("Required field 'step' missing for notify operation");
  });

  it('reports the two-level date failure with the specific cause in details', async () => {
    const response = await notify({ ...MARS, identifier: { ...MARS.identifier, date: '2025/07/06' } });
    expect(response.status).toBe(400);
    expect(response.json.message).toBe("Failed to parse date value for field 'date'");
    expect(response.json.details).toBe("Field 'date' contains invalid date '2025/07/06'. Expected: YYYY-MM-DD, YYYYMMDD, or YYYY-DDD");
  });

  it('enforces a required payload, null counting as absent', async () => {
    const identifier = { date: '20250706', time: '1200', polygon: '(52.5,13.4,52.6,13.5,52.5,13.6,52.4,13.5,52.5,13.4)' };
    const missing = await notify({ event_type: 'test_polygon', identifier, payload: null });
    expect(missing.status).toBe(400);
    expect(missing.json.message).toBe('Payload is required for notify operation based on schema configuration');
    expect((await notify({ event_type: 'test_polygon', identifier, payload: { note: 'a' } })).status).toBe(200);
  });

  it('accepts a polygon as text or as an array of [lat, lon] pairs', async () => {
    const text = '(52.5,13.4,52.6,13.5,52.5,13.6,52.4,13.5,52.5,13.4)';
    const array = [
      [52.5, 13.4],
      [52.6, 13.5],
      [52.5, 13.6],
      [52.4, 13.5],
      [52.5, 13.4],
    ];
    for (const polygon of [text, array]) {
      const response = await notify({ event_type: 'test_polygon', identifier: { date: '20250706', time: '1200', polygon }, payload: 1 });
      expect(response.status).toBe(200);
    }
  });

  it('rejects an open polygon with the prefixed reason', async () => {
    const response = await notify({
      event_type: 'test_polygon',
      identifier: { date: '20250706', time: '1200', polygon: '(52.5,13.4,52.6,13.5,52.5,13.6,52.4,13.5)' },
      payload: 1,
    });
    expect(response.json.message).toBe(
      "field 'polygon' must be a valid polygon: polygon must be closed (first and last coordinates must be identical)",
    );
  });

  it('accepts a point cloud and enforces its max_points', async () => {
    const ok = await notify({
      event_type: 'sensor_cloud',
      identifier: {
        date: '20250706',
        point_cloud: [
          [1, 2],
          [3, 4],
        ],
      },
    });
    expect(ok.status).toBe(200);
    const tooMany = await notify({
      event_type: 'sensor_cloud',
      identifier: {
        date: '20250706',
        point_cloud: [
          [1, 2],
          [3, 4],
          [5, 6],
          [7, 8],
        ],
      },
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.json.message).toBe("field 'point_cloud' point cloud contains 4 points, maximum is 3");
  });

  it('refuses identifier values whose topic would exceed 2048 bytes (D24)', async () => {
    const response = await notify({ ...MARS, identifier: { ...MARS.identifier, stream: 'x'.repeat(2100) } });
    expect(response.status).toBe(400);
    expect(response.json.code).toBe('INVALID_NOTIFICATION_REQUEST');
    expect(response.json.message).toMatch(/^Identifier values are too long: the topic would be \d+ bytes, the limit is 2048$/);
  });

  it('rejects an unknown event type in strict mode with the sorted configured list and no details', async () => {
    const response = await notify({ event_type: 'asadasdasd', identifier: {} });
    expect(response.status).toBe(400);
    expect(response.json).toEqual({
      code: 'UNKNOWN_EVENT_TYPE',
      configured_event_types: ['dissemination', 'extreme_event', 'mars', 'sensor_cloud', 'test_polygon'],
      error: 'unknown_event_type',
      message: "unknown event type 'asadasdasd'",
      request_id: response.headers.get('x-request-id'),
    });
  });

  it('answers INVALID_JSON for a body that is not JSON', async () => {
    const response = await notify('{"event_type": ');
    expect(response.status).toBe(400);
    expect(response.json.code).toBe('INVALID_JSON');
    expect(response.json.error).toBe('Invalid Notification Request');
    expect(response.json.message).toMatch(/^JSON parsing failed: /);
    expect(response.json.request_id).toBe(response.headers.get('x-request-id'));
  });

  it('answers INVALID_JSON for a body that is not UTF-8', async () => {
    const response = await request(`${server.url}/api/v1/notification`, {
      method: 'POST',
      body: new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
    });
    expect(response.json.code).toBe('INVALID_JSON');
  });

  it('answers UNKNOWN_FIELD for a top-level key outside the five', async () => {
    const response = await notify({ ...MARS, priority: 'high' });
    expect(response.status).toBe(400);
    expect(response.json.code).toBe('UNKNOWN_FIELD');
  });

  it('answers INVALID_REQUEST_SHAPE for a non-string event type', async () => {
    const response = await notify({ event_type: 42, identifier: {} });
    expect(response.status).toBe(400);
    expect(response.json.code).toBe('INVALID_REQUEST_SHAPE');
    expect(response.json.message).toMatch(/^Request deserialization failed: /);
  });

  it('ignores from_id and from_date on notify', async () => {
    expect((await notify({ ...MARS, from_id: 'not-a-number', from_date: 'never' })).status).toBe(200);
  });
});

describe('request ids', () => {
  it('ignores an incoming X-Request-ID and generates a fresh one per request', async () => {
    const first = await request(`${server.url}/health`, { headers: { 'x-request-id': 'mine' } });
    const second = await request(`${server.url}/health`);
    expect(first.headers.get('x-request-id')).toMatch(UUID_V4);
    expect(second.headers.get('x-request-id')).toMatch(UUID_V4);
    expect(first.headers.get('x-request-id')).not.toBe(second.headers.get('x-request-id'));
  });
});

describe('GET /health', () => {
  it('answers {"status":"ok"}', async () => {
    const response = await request(`${server.url}/health`);
    expect(response.status).toBe(200);
    expect(response.text).toBe('{"status":"ok"}');
  });
});

describe('framework fallbacks (D3, D15)', () => {
  it.each(['/nope', '/health/', '/api/v1/schema/', '/api/v1'])('answers 404 NOT_FOUND as JSON for %s', async (path) => {
    const response = await request(`${server.url}${path}`);
    expect(response.status).toBe(404);
    expect(response.json.code).toBe('NOT_FOUND');
    expect(response.json.request_id).toBe(response.headers.get('x-request-id'));
  });

  it.each([
    ['GET', '/api/v1/notification', 'POST'],
    ['POST', '/health', 'GET, HEAD'],
    ['DELETE', '/api/v1/schema/mars', 'GET, HEAD'],
  ])('answers %s %s with 405 and Allow: %s', async (method, path, allow) => {
    const response = await request(`${server.url}${path}`, { method });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe(allow);
    expect(response.json.code).toBe('METHOD_NOT_ALLOWED');
    expect(response.json.request_id).toBe(response.headers.get('x-request-id'));
  });

  it('answers 413 PAYLOAD_TOO_LARGE for a body over the limit', async () => {
    const response = await notify({ ...MARS, payload: 'x'.repeat(300_000) });
    expect(response.status).toBe(413);
    expect(response.json.code).toBe('PAYLOAD_TOO_LARGE');
    expect(response.json.request_id).toBe(response.headers.get('x-request-id'));
  });
});
