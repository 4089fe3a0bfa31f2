import { connect as connectHttp2, type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { findFreePort } from '../support/ports.js';
import { serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { createTestCertificates, type TestCertificates, withTls } from '../support/test-certificates.js';
import { https1Client } from '../support/tls-clients.js';
import { TRANSCRIPT_REQUEST, transcriptNotification } from '../support/transcript.js';
import { ErrorCode, FrameType, RawH2Connection, headerFrames, hpack, requestFrames, requestHeaderBlock } from './support/raw-h2.js';
import { metricSum } from './support/raw-sse.js';
import { expectStillServing } from './support/still-serving.js';

/**
 * The HTTP/2 limits of the TLS port as Node enforces them (docs/security.md, "TLS and HTTP/2"),
 * measured against the real server process with hand-built frames: how many header fields a request
 * may have, what an oversized header list gets before and after the client acknowledged the
 * server's SETTINGS, and what the 257th concurrent stream of a connection does. Then the
 * many-connection shape of the outside probe: 5,120 watches over 20 connections.
 */

const MAX_CONCURRENT_STREAMS = 256;
const WATCH_BODY = JSON.stringify(TRANSCRIPT_REQUEST);
/** 256 streams and their checks; generous, the machine is shared. */
const ATTACK_TIMEOUT_MS = 60_000;

let certificates: TestCertificates;
let standard: RunningServer;
let metricsPort: number;
/** `max_header_bytes` at its largest allowed value: the field-count limit does not move with it. */
let wide: RunningServer;
const connections: RawH2Connection[] = [];

beforeAll(async () => {
  certificates = createTestCertificates();
  metricsPort = await findFreePort();
  standard = await startServer({
    config: withTls(serverConfig({ metrics: { enabled: true, host: '127.0.0.1', port: metricsPort } }), certificates),
  });
  wide = await startServer({ config: withTls(serverConfig(), certificates, { max_header_bytes: 1_048_576 }) });
});
afterEach(() => {
  for (const connection of connections.splice(0)) connection.close();
});
afterAll(async () => {
  await standard?.stop();
  await wide?.stop();
  certificates?.remove();
});

async function rawConnection(server: RunningServer, acknowledgeSettings = true): Promise<RawH2Connection> {
  const connection = await RawH2Connection.open(server.port, { acknowledgeSettings });
  connections.push(connection);
  return connection;
}

async function activeStreams(): Promise<number> {
  return metricSum(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text(), 'aviso_sse_connections_active');
}

function fields(count: number): Buffer[] {
  return Array.from({ length: count }, (_, index) => hpack.literal(`x-field-${index}`, 'v'));
}

/** What stream 1 got for a GET /health carrying `count` extra header fields. */
async function answerToFields(server: RunningServer, count: number, acknowledgeSettings: boolean): Promise<'ok' | number> {
  const connection = await rawConnection(server, acknowledgeSettings);
  connection.send(requestFrames(1, 'GET', '/health', undefined, fields(count)));
  await connection.waitFor('an answer on stream 1', () => connection.answered(1) || connection.resets().length > 0);
  const reset = connection.resets().find((entry) => entry.streamId === 1);
  if (reset) return reset.errorCode;
  expect(connection.answeredOk(1)).toBe(true);
  return 'ok';
}

describe('header fields per request', () => {
  describe.each([
    ['16384 (the default)', () => standard],
    ['1048576 (the largest allowed)', () => wide],
  ])('with max_header_bytes %s', (_limit, server) => {
    it.each([true, false])(
      'serves 124 fields beside the four pseudo-header fields and refuses 125 with RST_STREAM ENHANCE_YOUR_CALM (settings acknowledged: %s)',
      async (acknowledged) => {
        // Node's maxHeaderListPairs (128) counts the pseudo-header fields: 4 + 124 is the most.
        expect(await answerToFields(server(), 124, acknowledged)).toBe('ok');
        expect(await answerToFields(server(), 125, acknowledged)).toBe(ErrorCode.ENHANCE_YOUR_CALM);
        expect(await answerToFields(server(), 400, acknowledged)).toBe(ErrorCode.ENHANCE_YOUR_CALM);
      },
    );
  });

  it('HTTP/1.1 on the same port accepts 125 and 400 header fields', async () => {
    const client = https1Client(`https://localhost:${standard.port}`, certificates.ca);
    try {
      for (const count of [125, 400]) {
        const headers = Object.fromEntries(Array.from({ length: count }, (_, index) => [`x-field-${index}`, 'v']));
        expect((await client.request('/health', { headers })).status).toBe(200);
      }
    } finally {
      client.close();
    }
  });
});

describe('a header list over max_header_bytes (16384)', () => {
  const oversized = (streamId: number) =>
    headerFrames(streamId, requestHeaderBlock('GET', '/health', [hpack.literal('x-padding', 'p'.repeat(17_000))]));

  it('once the client acknowledged the SETTINGS: RST_STREAM ENHANCE_YOUR_CALM from Node, on that stream only', async () => {
    const connection = await rawConnection(standard, true);
    connection.send(oversized(1));
    await connection.waitFor('RST_STREAM on stream 1', () => connection.resets().length > 0);
    expect(connection.resets()).toEqual([{ streamId: 1, errorCode: ErrorCode.ENHANCE_YOUR_CALM }]);
    expect(connection.answered(1)).toBe(false);
    connection.send(requestFrames(3, 'GET', '/health'));
    await connection.waitFor('the answer on stream 3', () => connection.answered(3));
    expect(connection.answeredOk(3)).toBe(true);
    expect(connection.goaway()).toBeUndefined();
  });

  it("before the client acknowledged them: the server's own 431 HEADERS_TOO_LARGE in the error shape", async () => {
    const connection = await rawConnection(standard, false);
    connection.send(oversized(1));
    await connection.waitFor('the 431 body on stream 1', () => connection.dataText(1).endsWith('}'));
    expect(connection.answered(1)).toBe(true);
    expect(connection.answeredOk(1)).toBe(false);
    expect(JSON.parse(connection.dataText(1))).toMatchObject({ code: 'HEADERS_TOO_LARGE', error: 'headers_too_large' });
    expect(connection.resets()).toEqual([]);
  });
});

describe('concurrent streams per connection', () => {
  /** Opens watches on streams 1, 3, … and waits until each sent its opening frame. */
  async function openWatches(connection: RawH2Connection, count: number): Promise<number[]> {
    const streamIds = Array.from({ length: count }, (_, index) => 1 + 2 * index);
    connection.send(...streamIds.map((streamId) => requestFrames(streamId, 'POST', '/api/v1/watch', WATCH_BODY)));
    await connection.waitFor(`${count} opening frames`, () =>
      streamIds.every((streamId) => connection.dataText(streamId).includes('connection_established')),
    );
    return streamIds;
  }

  it(
    'keeps 256 watches open; the 257th closes the whole connection (RST_STREAM INTERNAL_ERROR, no GOAWAY) and its watches are released',
    async () => {
      const connection = await rawConnection(standard, true);
      const streamIds = await openWatches(connection, MAX_CONCURRENT_STREAMS);
      expect(streamIds.every((streamId) => connection.answeredOk(streamId))).toBe(true);
      await eventually('256 watches counted', async () => (await activeStreams()) === MAX_CONCURRENT_STREAMS);
      const framesBefore = connection.received.length;

      connection.send(requestFrames(1 + 2 * MAX_CONCURRENT_STREAMS, 'POST', '/api/v1/watch', WATCH_BODY));
      await eventually('the server to close the connection', () => connection.isClosed, { timeoutMs: 30_000 });
      const after = connection.received.slice(framesBefore);
      // nghttp2 treats a stream over the acknowledged SETTINGS_MAX_CONCURRENT_STREAMS as a connection
      // error; Node then tears the session down with one RST_STREAM instead of a GOAWAY.
      expect(after.filter((entry) => entry.type !== FrameType.DATA /* a heartbeat may still arrive */)).toHaveLength(1);
      expect(connection.resets()).toEqual([{ streamId: 1, errorCode: ErrorCode.INTERNAL_ERROR }]);
      expect(connection.goaway()).toBeUndefined();
      expect(connection.answered(1 + 2 * MAX_CONCURRENT_STREAMS)).toBe(false);
      await eventually('every watch of the closed connection released', async () => (await activeStreams()) === 0);
      await expectStillServing(standard, certificates.ca);
    },
    ATTACK_TIMEOUT_MS,
  );

  it(
    'before the client acknowledged the SETTINGS, the 257th alone is refused with RST_STREAM REFUSED_STREAM',
    async () => {
      const connection = await rawConnection(standard, false);
      await openWatches(connection, MAX_CONCURRENT_STREAMS);
      const refused = 1 + 2 * MAX_CONCURRENT_STREAMS;
      connection.send(requestFrames(refused, 'POST', '/api/v1/watch', WATCH_BODY));
      await connection.waitFor('RST_STREAM on the 257th stream', () => connection.resets().length > 0);
      expect(connection.resets()).toEqual([{ streamId: refused, errorCode: ErrorCode.REFUSED_STREAM }]);
      expect(connection.isClosed).toBe(false);
      expect(connection.goaway()).toBeUndefined();
      connection.close();
      await eventually('every watch released', async () => (await activeStreams()) === 0);
    },
    ATTACK_TIMEOUT_MS,
  );
});

describe('many connections at the stream limit', () => {
  const CONNECTIONS = 20;

  /** A watch read only for what this test needs: `seen` resolves once its text contains the needle. */
  function watchOn(session: ClientHttp2Session): { seen: (needle: string) => Promise<void> } {
    const stream: ClientHttp2Stream = session.request({ ':method': 'POST', ':path': '/api/v1/watch', 'content-type': 'application/json' });
    stream.end(WATCH_BODY);
    stream.setEncoding('utf8');
    let text = '';
    const waiting = new Map<string, { resolve: () => void; reject: (error: Error) => void }>();
    stream.on('data', (chunk: string) => {
      text += chunk;
      for (const [needle, waiter] of waiting) if (text.includes(needle)) waiter.resolve();
    });
    stream.on('close', () => {
      for (const [needle, waiter] of waiting) waiter.reject(new Error(`the watch closed before ${needle}`));
    });
    stream.on('error', () => undefined);
    const seen = (needle: string) =>
      new Promise<void>((resolve, reject) => {
        if (text.includes(needle)) return resolve();
        if (stream.closed) return reject(new Error(`the watch closed before ${needle}`));
        waiting.set(needle, { resolve, reject });
      });
    return { seen };
  }

  it('carries 5,120 watches over 20 connections at 256 each, delivers one notification to every one, and releases them all', async () => {
    const origin = `https://localhost:${standard.port}`;
    const sessions = Array.from({ length: CONNECTIONS }, () => {
      const session = connectHttp2(origin, { ca: certificates.ca });
      session.on('error', () => undefined);
      return session;
    });
    try {
      const watches = sessions.flatMap((session) => Array.from({ length: MAX_CONCURRENT_STREAMS }, () => watchOn(session)));
      await Promise.all(watches.map((watch) => watch.seen('connection_established')));
      await eventually('5,120 watches counted', async () => (await activeStreams()) === CONNECTIONS * MAX_CONCURRENT_STREAMS, {
        timeoutMs: 60_000,
      });
      const publisher = https1Client(origin, certificates.ca);
      try {
        expect((await publisher.request('/api/v1/notification', { body: transcriptNotification('to-5120') })).status).toBe(200);
      } finally {
        publisher.close();
      }
      await Promise.all(watches.map((watch) => watch.seen('"note":"to-5120"')));
    } finally {
      for (const session of sessions) session.destroy();
    }
    await eventually('every watch released', async () => (await activeStreams()) === 0, { timeoutMs: 60_000 });
    await expectStillServing(standard, certificates.ca);
  }, 180_000);
});
