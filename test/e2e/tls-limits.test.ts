import { connect as connectHttp2, constants as http2Constants } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { within } from '../support/eventually.js';
import { UUID_V4 } from '../support/http.js';
import { RawHttp2Connection } from '../support/raw-http2.js';
import { MARS_EXAMPLE, serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { createTestCertificates, type TestCertificates, withTls } from '../support/test-certificates.js';
import { dripHttp2Body, http2Client, https1Client, tlsDripExchange, type ProtocolClient } from '../support/tls-clients.js';

/**
 * docs/security.md, "TLS and HTTP/2": the connection limits of `application` on the TLS port.
 * Slow clients send a byte every DRIP_MS for as long as the connection lasts, so only the server
 * can end their requests: the test's timeout is the bound, no duration is measured.
 */
const HEADERS_TIMEOUT_MS = 500;
const REQUEST_TIMEOUT_MS = 1000;
const DRIP_MS = 100;

let certificates: TestCertificates;
let server: RunningServer;
let origin: string;
beforeAll(async () => {
  certificates = createTestCertificates();
  server = await startServer({
    // Access lines are how a test sees that a request was taken note of (D34: debug by default).
    config: withTls(serverConfig({ logging: { access_log: 'info' } }), certificates, {
      max_header_bytes: 2048,
      headers_timeout_ms: HEADERS_TIMEOUT_MS,
      request_timeout_ms: REQUEST_TIMEOUT_MS,
    }),
  });
  origin = `https://localhost:${server.port}`;
});
afterAll(async () => {
  await server?.stop();
  certificates?.remove();
});

describe('application.max_header_bytes on the TLS port', () => {
  it('answers an HTTP/1.1 head over the limit with the 431 error shape', async () => {
    const client = https1Client(origin, certificates.ca);
    try {
      const response = await client.request('/health', { headers: { 'x-padding': 'p'.repeat(4096) } });
      expect(response.status).toBe(431);
      expect(response.json).toMatchObject({ code: 'HEADERS_TOO_LARGE' });
    } finally {
      client.close();
    }
  });

  it('answers an HTTP/2 header list over the limit with the 431 error shape, on that stream only', async () => {
    const client = http2Client(origin, certificates.ca);
    try {
      const refused = await client.request('/api/v1/notification', { body: '{}', headers: { 'x-padding': 'p'.repeat(4096) } });
      expect(refused.status).toBe(431);
      expect(refused.json).toEqual({
        code: 'HEADERS_TOO_LARGE',
        error: 'headers_too_large',
        message: 'The request head exceeds the configured limit',
        request_id: refused.headers['x-request-id'],
      });
      expect((await client.request('/health', { headers: { 'x-padding': 'p'.repeat(1024) } })).status).toBe(200);
    } finally {
      client.close();
    }
  });
});

/** The body of an HTTP/1.1 answer read off the wire, which must be the 408 of a slow request. */
function expectRequestTimeout(raw: string): void {
  expect(raw, raw.slice(0, 300)).toMatch(/HTTP\/1\.1 408 Request Timeout\r\n/);
  const answer = raw.slice(raw.lastIndexOf('HTTP/1.1 408'));
  const requestId = /\r\nX-Request-ID: ([^\r]+)\r\n/i.exec(answer)?.[1];
  expect(JSON.parse(answer.split('\r\n\r\n')[1] ?? '')).toEqual({
    code: 'REQUEST_TIMEOUT',
    error: 'request_timeout',
    message: 'The request was not received in time',
    request_id: requestId,
  });
  expect(requestId).toMatch(UUID_V4);
}

/** While slow clients hold their connections, ordinary clients of both protocols are served. */
async function expectOthersServed(): Promise<void> {
  for (const client of [https1Client(origin, certificates.ca), http2Client(origin, certificates.ca)]) {
    try {
      expect((await client.request('/api/v1/notification', { body: MARS_EXAMPLE })).status).toBe(200);
    } finally {
      client.close();
    }
  }
}

const NOTIFY_HEAD = 'POST /api/v1/notification HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n';

describe('application.headers_timeout_ms and request_timeout_ms on TLS HTTP/1.1', () => {
  it('answers 408 to a connection that sends nothing, and closes it', async () => {
    expectRequestTimeout(await tlsDripExchange(server.port, certificates.ca, [''], DRIP_MS));
  });

  it('answers 408 to a first request head sent a byte at a time, while others are served', async () => {
    const slow = tlsDripExchange(server.port, certificates.ca, [`${NOTIFY_HEAD}X-Slow: `, 'a'], DRIP_MS);
    await expectOthersServed();
    expectRequestTimeout(await slow);
  });

  it('answers 408 to the second request head of a keep-alive connection sent a byte at a time', async () => {
    const first = 'GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n';
    const raw = await tlsDripExchange(server.port, certificates.ca, [first, `${NOTIFY_HEAD}X-Slow: `, 'a'], DRIP_MS);
    expect(raw).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expectRequestTimeout(raw);
  });

  it('answers 408 to a request body sent a byte at a time, while others are served', async () => {
    const slow = tlsDripExchange(server.port, certificates.ca, [`${NOTIFY_HEAD}Content-Length: 100000\r\n\r\n{`, ' '], DRIP_MS);
    await expectOthersServed();
    expectRequestTimeout(await slow);
  });
});

describe('application.headers_timeout_ms and request_timeout_ms on HTTP/2', () => {
  it('answers 408 to a request body sent a byte at a time on that stream only, and the connection goes on', async () => {
    const session = connectHttp2(origin, { ca: certificates.ca });
    session.on('error', () => undefined);
    try {
      const slow = dripHttp2Body(
        session,
        { ':method': 'POST', ':path': '/api/v1/notification', 'content-type': 'application/json' },
        '{',
        ' ',
        DRIP_MS,
      );
      await expectOthersServed();
      const answer = await slow;
      expect(answer.status).toBe(408);
      expect(answer.json).toEqual({
        code: 'REQUEST_TIMEOUT',
        error: 'request_timeout',
        message: 'The request was not received in time',
        request_id: answer.headers['x-request-id'],
      });
      expect(answer.headers['x-request-id']).toMatch(UUID_V4);
      // The answer is complete, then the stream is reset so the client stops sending (RFC 9113 §8.1).
      expect(answer.rstCode).toBe(http2Constants.NGHTTP2_NO_ERROR);
      expect(session.destroyed).toBe(false);
      const health = session.request({ ':path': '/health' });
      const status = await new Promise((resolve) => health.once('response', (headers) => resolve(headers[':status'])));
      health.resume();
      expect(status).toBe(200);
    } finally {
      session.close();
    }
  });

  it('stores nothing for a request answered 408, even when its body was complete JSON', async () => {
    const session = connectHttp2(origin, { ca: certificates.ca });
    session.on('error', () => undefined);
    const marker = { ...MARS_EXAMPLE, identifier: { ...MARS_EXAMPLE.identifier, step: '987' } };
    // Each step bounded on its own, so a hang (seen once in a full run) says which step and what
    // the server logged last.
    const lastEvents = () =>
      `server's last events: ${server.logs
        .slice(-8)
        .map((line) => line.attributes?.['event.name'])
        .join(', ')}`;
    try {
      const answer = await within(
        'answer to the dripped request',
        dripHttp2Body(
          session,
          { ':method': 'POST', ':path': '/api/v1/notification', 'content-type': 'application/json' },
          JSON.stringify(marker),
          ' ',
          DRIP_MS,
        ),
        8_000,
        lastEvents,
      );
      expect(answer.status).toBe(408);
    } finally {
      session.close();
    }
    const client = http2Client(origin, certificates.ca);
    try {
      const replay = await within(
        'replay opened',
        client.stream('/api/v1/replay', { event_type: 'mars', identifier: marker.identifier, from_id: '1' }),
        5_000,
        lastEvents,
      );
      const events = await within('end of the replay', replay.rest(), 5_000, lastEvents);
      expect(events.filter((event) => event.json.specversion)).toEqual([]);
      expect(events.map((event) => event.json.type)).toContain('replay_completed');
    } finally {
      client.close();
    }
  });

  it('stores nothing for a request whose client resets its stream before the body ends', async () => {
    const session = connectHttp2(origin, { ca: certificates.ca });
    session.on('error', () => undefined);
    const marker = { ...MARS_EXAMPLE, identifier: { ...MARS_EXAMPLE.identifier, step: '988' } };
    const before = server.logs.length;
    try {
      const stream = session.request({ ':method': 'POST', ':path': '/api/v1/notification', 'content-type': 'application/json' });
      stream.on('error', () => undefined);
      // Complete JSON, but the request is not: the client then resets the stream without ending
      // it (`destroy`; `close` would send END_STREAM first, completing the request).
      stream.write(JSON.stringify(marker));
      await new Promise((resolve) => setTimeout(resolve, 100));
      stream.destroy();
      // The server took note of the request (its access line), and handled nothing.
      await server.waitForLog('http.request.completed', { from: before });
    } finally {
      session.close();
    }
    expect(server.logs.slice(before).filter((line) => line.attributes?.['event.name'] === 'api.notification.processed')).toEqual([]);
    const client = http2Client(origin, certificates.ca);
    try {
      const replay = await client.stream('/api/v1/replay', { event_type: 'mars', identifier: marker.identifier, from_id: '1' });
      expect((await replay.rest()).filter((event) => event.json.specversion)).toEqual([]);
    } finally {
      client.close();
    }
  });

  it('closes a connection whose request head never ends (a CONTINUATION sent a byte at a time), while others are served', async () => {
    const slow = await RawHttp2Connection.open(server.port, certificates.ca);
    try {
      slow.startEndlessHead('/api/v1/notification', DRIP_MS);
      await expectOthersServed();
      await slow.closed;
      expect(slow.goawayCode).toBe(http2Constants.NGHTTP2_ENHANCE_YOUR_CALM);
      // Closed by the server while the head was still coming, not because it ended.
      expect(slow.bytesLeftToDrip).toBeGreaterThan(0);
    } finally {
      slow.close();
    }
  });

  it('closes a connection that sends no request, with GOAWAY NO_ERROR', async () => {
    const idle = await RawHttp2Connection.open(server.port, certificates.ca);
    try {
      await idle.closed;
      expect(idle.goawayCode).toBe(http2Constants.NGHTTP2_NO_ERROR);
    } finally {
      idle.close();
    }
  });
});

describe('streams outlive the request timeout on the TLS port (it bounds receiving the request only)', () => {
  it.each([
    ['HTTP/2', () => http2Client(origin, certificates.ca)],
    ['HTTP/1.1', () => https1Client(origin, certificates.ca)],
  ])('%s: a watch still delivers after the timeouts have passed', async (protocol, makeClient: () => ProtocolClient) => {
    const client = makeClient();
    const identifier = { destination: `LONG${protocol.replace(/\W/g, '')}`, class: 'od' };
    try {
      const watch = await client.stream('/api/v1/watch', { event_type: 'dissemination', identifier });
      expect(watch.status).toBe(200);
      expect((await watch.next())?.json.type).toBe('connection_established');
      // Wait until both timeouts and several sweeps have certainly passed over this stream…
      const until = Date.now() + REQUEST_TIMEOUT_MS + HEADERS_TIMEOUT_MS + 1500;
      while (Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 250));
      // …then it must still deliver.
      const other = http2Client(origin, certificates.ca);
      try {
        expect((await other.request('/api/v1/notification', { body: { event_type: 'dissemination', identifier } })).status).toBe(200);
      } finally {
        other.close();
      }
      let event = await watch.nextSignificant();
      while (event && !event.json.specversion) event = await watch.nextSignificant();
      expect(event?.json.data, JSON.stringify(event)).toMatchObject({ identifier: { destination: identifier.destination } });
      watch.close();
    } finally {
      client.close();
    }
  });
});

describe('after the slow clients', () => {
  it('the server logged no error and Node printed no warning', () => {
    const errors = server.logs.filter((line) => line.severityText === 'ERROR' || line.severityText === 'FATAL');
    expect(errors).toEqual([]);
    expect(server.logs.filter((line) => /already sent/i.test(String(line.body)))).toEqual([]);
    expect(server.stderr()).toBe('');
  });
});
