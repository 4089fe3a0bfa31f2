import { createParser } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND_KINDS, useBackend } from '../support/backends.js';
import { eventually } from '../support/eventually.js';
import { TEST_SCHEMAS } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { createTestCertificates, type TestCertificates, withTls } from '../support/test-certificates.js';
import { http2Client, https1Client, type ProtocolClient, type ProtocolStream } from '../support/tls-clients.js';
import { replaceConfigFile } from './support/config-files.js';
import { expectStillServing, failureLines } from './support/still-serving.js';

/**
 * A storm of configuration reloads (docs/design/rules/browser.md §5, docs/security.md) against the real server
 * process on its TLS port: 100 SIGHUPs, each applying a configuration that adds or removes an event
 * type and changes another (and re-reads the certificate files), while 220 watches are open over
 * HTTP/2 and HTTP/1.1 and notifications keep arriving. Every watch must survive, keep its filter,
 * and receive every notification exactly once, in order. The outside probe ran this shape: 100
 * SIGHUPs with 220 streams open.
 */

const RELOADS = 100;
/** 2 HTTP/2 connections × 100 streams + 20 HTTP/1.1 connections: 220 watches. */
const HTTP2_CONNECTIONS = 2;
const STREAMS_PER_HTTP2_CONNECTION = 100;
const HTTP1_STREAMS = 20;

const { mars, dissemination, test_polygon } = TEST_SCHEMAS;
const FLOOD = {
  topic: { base: 'flood', key_order: ['region'] },
  identifier: { region: { type: 'StringHandler', required: true } },
};
/** `mars` with a longer `class`: a changed schema that still accepts what the watches asked for. */
const WIDER_MARS = { ...mars, identifier: { ...mars.identifier, class: { ...mars.identifier.class, max_length: 4 } } };
const SCHEMAS = [
  { mars, dissemination, test_polygon },
  { mars: WIDER_MARS, dissemination, test_polygon, flood: FLOOD },
] as const;

const WATCHES = {
  dissemination: { event_type: 'dissemination', identifier: { destination: '*', class: 'od' } },
  mars: { event_type: 'mars', identifier: { class: 'od' } },
} as const;
type Watched = keyof typeof WATCHES;
const NOTIFICATIONS: Record<Watched, (note: string) => unknown> = {
  dissemination: (note) => ({ event_type: 'dissemination', identifier: { destination: 'ecmwf', class: 'od' }, payload: { note } }),
  mars: (note) => ({
    event_type: 'mars',
    identifier: { class: 'od', expver: '1', domain: 'g', date: '20250706', time: '1200', stream: 'enfo', step: '1' },
    payload: { note },
  }),
};

interface Watch {
  readonly watched: Watched;
  readonly stream: ProtocolStream;
}

interface Delivered {
  readonly notes: string[];
  readonly sequences: number[];
  /** Frames other than notifications and heartbeats after the opening one (a close, an error). */
  readonly others: string[];
}

/** Every frame a watch received so far, read from its raw text. */
function delivered(watch: Watch): Delivered {
  const result: Delivered = { notes: [], sequences: [], others: [] };
  let first = true;
  const parser = createParser({
    onEvent: (message) => {
      const json = JSON.parse(message.data) as { id?: string; type?: string; data?: { payload?: { note?: string } } };
      if (first) {
        first = false;
        if (json.type === 'connection_established') return;
      }
      if (message.event === 'heartbeat') return;
      if (message.event === 'live-notification' && json.id) {
        result.notes.push(json.data?.payload?.note ?? '');
        result.sequences.push(Number(json.id.split('@')[1]));
        return;
      }
      result.others.push(`${message.event ?? 'message'} ${message.data}`);
    },
  });
  parser.feed(watch.stream.raw);
  return result;
}

let certificates: TestCertificates;
beforeAll(() => {
  certificates = createTestCertificates();
});
afterAll(() => certificates?.remove());

describe.each(BACKEND_KINDS)('a reload storm on %s', (kind) => {
  const backend = useBackend(kind);
  let server: RunningServer;
  const clients: ProtocolClient[] = [];
  afterAll(async () => {
    for (const client of clients) client.close();
    await server?.stop();
  });

  const configFor = (reload: number) => withTls(backend.config({ notification_schema: SCHEMAS[reload % 2] }), certificates);

  async function openWatches(origin: string): Promise<Watch[]> {
    const opening: Promise<Watch>[] = [];
    const open = (client: ProtocolClient, index: number) => {
      const watched: Watched = index % 2 === 0 ? 'dissemination' : 'mars';
      opening.push(client.stream('/api/v1/watch', WATCHES[watched]).then((stream) => ({ watched, stream })));
    };
    for (let connection = 0; connection < HTTP2_CONNECTIONS; connection++) {
      const client = http2Client(origin, certificates.ca);
      clients.push(client);
      for (let index = 0; index < STREAMS_PER_HTTP2_CONNECTION; index++) open(client, index);
    }
    const http1 = https1Client(origin, certificates.ca);
    clients.push(http1);
    for (let index = 0; index < HTTP1_STREAMS; index++) open(http1, index);
    const watches = await Promise.all(opening);
    for (const watch of watches) {
      expect(watch.stream.status).toBe(200);
      expect((await watch.stream.nextSignificant())?.json.type).toBe('connection_established');
    }
    return watches;
  }

  it(`${RELOADS} SIGHUPs with 220 watches open: every reload applied, every watch kept, every notification delivered once and in order`, async () => {
    server = await startServer({ config: configFor(0) });
    const origin = `https://localhost:${server.port}`;
    const watches = await openWatches(origin);
    const publisher = http2Client(origin, certificates.ca);
    clients.push(publisher);
    const published: Record<Watched, string[]> = { dissemination: [], mars: [] };
    const publish = async (watched: Watched, note: string) => {
      const response = await publisher.request('/api/v1/notification', { body: NOTIFICATIONS[watched](note) });
      expect(response.status, response.text).toBe(200);
      published[watched].push(note);
    };

    for (let reload = 1; reload <= RELOADS; reload++) {
      replaceConfigFile(server.configFile, configFor(reload));
      const from = server.logs.length;
      server.signal('SIGHUP');
      // The next signal only once this one is being handled: signals sent closer together may merge into one.
      for (let line = from; ;) {
        const requested = await server.waitForLog('configuration.reload.requested', { from: line });
        if (requested.attributes?.source === 'signal') break;
        line = server.logs.indexOf(requested) + 1;
      }
      await publish('dissemination', `d-${reload}`);
      await publish('mars', `m-${reload}`);
    }

    const outcomes = () => server.logs.filter((line) => String(line.attributes?.['event.name']).startsWith('configuration.reload.'));
    await eventually(
      `${RELOADS} reloads succeeded`,
      () => outcomes().filter((line) => line.attributes?.['event.name'] === 'configuration.reload.succeeded').length === RELOADS,
    );
    const failed = outcomes().filter((line) => line.attributes?.['event.name'] === 'configuration.reload.failed');
    expect(failed).toEqual([]);
    // Each reload swapped schemas: flood came and went, mars changed.
    const last = outcomes()
      .filter((line) => line.attributes?.['event.name'] === 'configuration.reload.succeeded')
      .at(-1);
    expect(last?.attributes).toMatchObject({ event_types_removed: ['flood'], event_types_changed: ['mars'] });

    await publish('dissemination', 'd-final');
    await publish('mars', 'm-final');
    await eventually('every watch to receive the final notification', () =>
      watches.every((watch) => delivered(watch).notes.includes(watch.watched === 'mars' ? 'm-final' : 'd-final')),
    );
    for (const watch of watches) {
      const { notes, sequences, others } = delivered(watch);
      expect(others).toEqual([]);
      expect(notes).toEqual(published[watch.watched]);
      for (let index = 1; index < sequences.length; index++) expect(sequences[index]).toBeGreaterThan(sequences[index - 1] as number);
      expect(watch.stream.hasEnded).toBe(false);
    }
    expect(failureLines(server)).toEqual([]);
    await expectStillServing(server, certificates.ca);
  }, 240_000);
});
