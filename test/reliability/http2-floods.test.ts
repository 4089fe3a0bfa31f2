import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { findFreePort } from '../support/ports.js';
import { serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { createTestCertificates, type TestCertificates, withTls } from '../support/test-certificates.js';
import { http2Client } from '../support/tls-clients.js';
import { TRANSCRIPT_REQUEST } from '../support/transcript.js';
import { PROBE_AFTER_RESET_MS, PROBE_ANSWER_MS } from '../../src/http/transport/http2-reset-flood.js';
import {
  ErrorCode,
  Flag,
  FrameType,
  NEWEST_DYNAMIC_ENTRY,
  RawH2Connection,
  frame,
  hpack,
  requestFrames,
  requestHeaderBlock,
  rstStream,
} from './support/raw-h2.js';
import { metricSum } from './support/raw-sse.js';
import { expectStillServing } from './support/still-serving.js';

/**
 * HTTP/2 floods against the real server process on its TLS port (docs/security.md, "HTTP/2 under
 * attack"), each written frame by frame so it is really sent: rapid reset (CVE-2023-44487), PING
 * and SETTINGS floods, empty DATA frames, CONTINUATION floods (CVE-2024-27316 family) and HPACK
 * bombs. Node's HTTP/2 layer (nghttp2) cuts each of them; the assertions pin down how, as Node 20
 * behaves today, so a Node upgrade that changes the answer shows here. After every attack the
 * server must still serve a watch on a fresh connection and have logged no error.
 *
 * Scale: the probe that found these sent the same shapes; the counts here are what it took to
 * trigger each limit, with a margin (a 2-core CI machine sends 20,000 small frames in well under
 * a second).
 */

const FLOOD_FRAMES = 20_000;
const RAPID_RESET_STREAMS = 3_000;
/**
 * What Node leaves open after a GOAWAY other than a rapid reset's (a bad HPACK table size) is
 * closed by the HTTP/2 session timeout (`keep_alive_timeout_ms`): short here so the test sees it.
 */
const SESSION_TIMEOUT_MS = 3_000;
const WATCH_BODY = JSON.stringify(TRANSCRIPT_REQUEST);
/** The rapid-reset server's session, head and request timeouts: longer than the test may wait. */
const PATIENT_TIMEOUT_MS = 60_000;
/**
 * How long a connection nghttp2 gave up on may stay open: the PING's delay and deadline
 * (`PROBE_AFTER_RESET_MS` + `PROBE_ANSWER_MS`, 3 s) with a margin for a loaded machine, and half
 * of any timeout that could close it otherwise.
 */
const PROMPT_CLOSE_MS = 15_000;
/** One attack with its checks; generous, the machine is shared. */
const ATTACK_TIMEOUT_MS = 60_000;

let certificates: TestCertificates;
let server: RunningServer;
let metricsPort: number;
const connections: RawH2Connection[] = [];

beforeAll(async () => {
  certificates = createTestCertificates();
  metricsPort = await findFreePort();
  server = await startServer({
    config: withTls(serverConfig({ metrics: { enabled: true, host: '127.0.0.1', port: metricsPort } }), certificates, {
      keep_alive_timeout_ms: SESSION_TIMEOUT_MS,
    }),
  });
});
afterEach(() => {
  for (const connection of connections.splice(0)) connection.close();
});
afterAll(async () => {
  await server?.stop();
  certificates?.remove();
});

async function attacker(): Promise<RawH2Connection> {
  const connection = await RawH2Connection.open(server.port);
  connections.push(connection);
  return connection;
}

async function activeStreams(port: number): Promise<number> {
  return metricSum(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text(), 'aviso_sse_connections_active');
}

function serverCloses(connection: RawH2Connection): Promise<true> {
  return eventually('the server to close the connection', () => connection.isClosed, { timeoutMs: 30_000 });
}

describe('rapid reset', () => {
  /**
   * Timeouts long enough that neither closes the connection within the test's bound: the head
   * timeout (30 s by default) would close it too, since nghttp2 began a stream it never delivered.
   */
  let patient: RunningServer;
  let patientMetricsPort: number;
  beforeAll(async () => {
    patientMetricsPort = await findFreePort();
    patient = await startServer({
      config: withTls(serverConfig({ metrics: { enabled: true, host: '127.0.0.1', port: patientMetricsPort } }), certificates, {
        keep_alive_timeout_ms: PATIENT_TIMEOUT_MS,
        headers_timeout_ms: PATIENT_TIMEOUT_MS,
        request_timeout_ms: PATIENT_TIMEOUT_MS,
      }),
    });
  });
  afterAll(async () => {
    await patient?.stop();
  });

  it(
    '3,000 watch streams cancelled as soon as sent: GOAWAY INTERNAL_ERROR after about 1,000, the connection closed soon after (D44), and no stream left behind',
    async () => {
      const connection = await RawH2Connection.open(patient.port);
      connections.push(connection);
      const frames: Buffer[] = [];
      for (let index = 0; index < RAPID_RESET_STREAMS; index++) {
        const streamId = 1 + 2 * index;
        frames.push(requestFrames(streamId, 'POST', '/api/v1/watch', WATCH_BODY), rstStream(streamId, ErrorCode.CANCEL));
      }
      connection.send(...frames);
      await connection.waitFor('a GOAWAY', () => connection.goaway() !== undefined);
      const goaway = connection.goaway();
      expect(goaway?.errorCode).toBe(ErrorCode.INTERNAL_ERROR);
      // nghttp2 allows a burst of 1,000 streams reset by the client (then about 33 per second).
      const streamsAccepted = ((goaway?.lastStreamId ?? 0) + 1) / 2;
      expect(streamsAccepted).toBeGreaterThanOrEqual(1_000);
      expect(streamsAccepted).toBeLessThan(1_500);
      // Node stops reading the connection and would leave it open for the session timeout (60 s
      // here); the PING it cannot answer has it closed within seconds.
      await eventually('the server to close the connection well before its timeouts', () => connection.isClosed, {
        timeoutMs: PROMPT_CLOSE_MS,
      });
      // Every watch the server opened for a cancelled stream was released.
      await eventually('every cancelled watch released', async () => (await activeStreams(patientMetricsPort)) === 0);
      await expectStillServing(patient, certificates.ca);
    },
    ATTACK_TIMEOUT_MS,
  );

  it(
    'a client that reads keeps its connection after cancelling a stream: it answers the PING',
    async () => {
      const client = http2Client(`https://localhost:${patient.port}`, certificates.ca);
      try {
        const watch = await client.stream('/api/v1/watch', TRANSCRIPT_REQUEST);
        expect(watch.status).toBe(200);
        expect((await watch.next())?.event).toBe('live-notification');
        watch.close();
        // Past the probe and its deadline.
        await new Promise((resolve) => setTimeout(resolve, PROBE_AFTER_RESET_MS + PROBE_ANSWER_MS + 1_000));
        expect((await client.request('/health')).status).toBe(200);
        const again = await client.stream('/api/v1/watch', TRANSCRIPT_REQUEST);
        expect(again.status).toBe(200);
        again.close();
      } finally {
        client.close();
      }
    },
    ATTACK_TIMEOUT_MS,
  );
});

describe('control-frame floods', () => {
  it(
    '20,000 PINGs: the connection is closed without a GOAWAY once the queue of unsent PING ACKs overflows',
    async () => {
      const connection = await attacker();
      connection.send(...Array.from({ length: FLOOD_FRAMES }, () => frame(FrameType.PING, 0, 0, Buffer.alloc(8))));
      await serverCloses(connection);
      expect(connection.goaway()).toBeUndefined();
      expect(connection.count(FrameType.PING, Flag.ACK)).toBeLessThan(FLOOD_FRAMES);
      await expectStillServing(server, certificates.ca);
    },
    ATTACK_TIMEOUT_MS,
  );

  it(
    '20,000 SETTINGS frames: GOAWAY INTERNAL_ERROR, then the connection is closed',
    async () => {
      const connection = await attacker();
      const acksBefore = connection.count(FrameType.SETTINGS, Flag.ACK);
      connection.send(...Array.from({ length: FLOOD_FRAMES }, () => frame(FrameType.SETTINGS, 0, 0)));
      await serverCloses(connection);
      expect(connection.goaway()).toEqual({ lastStreamId: 0, errorCode: ErrorCode.INTERNAL_ERROR });
      expect(connection.count(FrameType.SETTINGS, Flag.ACK) - acksBefore).toBeLessThan(FLOOD_FRAMES);
      await expectStillServing(server, certificates.ca);
    },
    ATTACK_TIMEOUT_MS,
  );
});

describe('frames that carry nothing', () => {
  it(
    '20,000 empty DATA frames on a notify: GOAWAY INTERNAL_ERROR (more than 1,000 invalid frames), then the connection is closed',
    async () => {
      const connection = await attacker();
      const head = frame(FrameType.HEADERS, Flag.END_HEADERS, 1, requestHeaderBlock('POST', '/api/v1/notification'));
      connection.send(head, ...Array.from({ length: FLOOD_FRAMES }, () => frame(FrameType.DATA, 0, 1)));
      await serverCloses(connection);
      expect(connection.goaway()).toEqual({ lastStreamId: 1, errorCode: ErrorCode.INTERNAL_ERROR });
      await expectStillServing(server, certificates.ca);
    },
    ATTACK_TIMEOUT_MS,
  );

  it.each([
    ['one small header field each', hpack.literal('x-flood', 'f')],
    ['nothing at all', Buffer.alloc(0)],
  ])(
    '20,000 CONTINUATION frames carrying %s: GOAWAY INTERNAL_ERROR, then the connection is closed',
    async (_what, fragment) => {
      const connection = await attacker();
      const head = frame(FrameType.HEADERS, Flag.END_STREAM, 1, requestHeaderBlock('GET', '/health'));
      connection.send(head, ...Array.from({ length: FLOOD_FRAMES }, () => frame(FrameType.CONTINUATION, 0, 1, fragment)));
      await serverCloses(connection);
      expect(connection.goaway()).toEqual({ lastStreamId: 1, errorCode: ErrorCode.INTERNAL_ERROR });
      // The request never completed, so it was never answered.
      expect(connection.answered(1)).toBe(false);
      await expectStillServing(server, certificates.ca);
    },
    ATTACK_TIMEOUT_MS,
  );
});

describe('HPACK bombs', () => {
  it(
    'a 4,000-byte field named 3,000 times by one-byte indexes (12 MB from 7 KB): RST_STREAM ENHANCE_YOUR_CALM, the connection goes on',
    async () => {
      const connection = await attacker();
      const references = Array.from({ length: 3_000 }, () => hpack.indexed(NEWEST_DYNAMIC_ENTRY));
      const block = requestHeaderBlock('GET', '/health', [hpack.insert('x-bomb', 'b'.repeat(4_000)), ...references]);
      expect(block.length).toBeLessThan(16_384);
      connection.send(frame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, 1, block));
      await connection.waitFor('RST_STREAM on stream 1', () => connection.resets().length > 0);
      expect(connection.resets()).toEqual([{ streamId: 1, errorCode: ErrorCode.ENHANCE_YOUR_CALM }]);
      expect(connection.answered(1)).toBe(false);
      // Only that stream was refused: the next request on the same connection is served.
      connection.send(requestFrames(3, 'GET', '/health'));
      await connection.waitFor('the answer on stream 3', () => connection.answered(3));
      expect(connection.answeredOk(3)).toBe(true);
      expect(connection.goaway()).toBeUndefined();
      await expectStillServing(server, certificates.ca);
    },
    ATTACK_TIMEOUT_MS,
  );

  it(
    'a dynamic table size update beyond the advertised 4,096 bytes: GOAWAY COMPRESSION_ERROR, then the connection is closed',
    async () => {
      const connection = await attacker();
      const block = Buffer.concat([hpack.tableSizeUpdate(1 << 20), requestHeaderBlock('GET', '/health')]);
      connection.send(frame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, 1, block));
      await connection.waitFor('a GOAWAY', () => connection.goaway() !== undefined);
      expect(connection.goaway()).toEqual({ lastStreamId: 1, errorCode: ErrorCode.COMPRESSION_ERROR });
      expect(connection.answered(1)).toBe(false);
      await serverCloses(connection);
      await expectStillServing(server, certificates.ca);
    },
    ATTACK_TIMEOUT_MS,
  );
});
