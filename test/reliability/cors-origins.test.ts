import type { IncomingHttpHeaders } from 'node:http2';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UUID_V4 } from '../support/http.js';
import { MARS_EXAMPLE, serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { createTestCertificates, type TestCertificates, withTls } from '../support/test-certificates.js';
import { http2Client, https1Client, type ProtocolClient } from '../support/tls-clients.js';
import { TRANSCRIPT_REQUEST } from '../support/transcript.js';

/**
 * Foreign origins against the CORS policy of the real server process (docs/design/rules/browser.md §2,
 * docs/security.md "CORS"), over HTTP/2 and HTTP/1.1 on its TLS port: origins that look like the
 * listed one (another scheme or port, a suffix or prefix of its host, a trailing dot or slash, user
 * info, a list, `null`, `*`), then random origins and random mutations of the listed one. None may
 * get a CORS header on a preflight, a notify, an error or a stream, and none may get a 5xx; the
 * listed origin, checked alongside, still does.
 */

const CONSOLE = 'https://console.example.org';
const RUNS = Number(process.env.FC_RUNS ?? 100);

const LOOKALIKES = [
  'null',
  '*',
  '',
  'http://console.example.org',
  'https://console.example.org:8443',
  'https://console.example.org.',
  'https://console.example.org/',
  'https://console.example.org.evil.test',
  'https://evilconsole.example.org',
  'https://evil.test/https://console.example.org',
  'https://console.example.org@evil.test',
  'https://user@console.example.org',
  'https://CONSOLE.EXAMPLE.ORG',
  'https://xn--cnsole-fya.example.org',
  'https://console.example.org%2f.evil.test',
  'https://console.example.org, https://evil.test',
  'https://console.example.org https://evil.test',
  'file://',
  'console.example.org',
];

const PROTOCOLS = [
  { name: 'HTTP/2', connect: http2Client },
  { name: 'HTTP/1.1 over TLS', connect: https1Client },
] as const;

let certificates: TestCertificates;
let server: RunningServer;
beforeAll(async () => {
  certificates = createTestCertificates();
  server = await startServer({
    config: withTls(serverConfig(), certificates, { cors: { allowed_origins: [CONSOLE] } }),
  });
});
afterAll(async () => {
  await server?.stop();
  certificates?.remove();
});

function corsHeaders(headers: IncomingHttpHeaders): Record<string, unknown> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith('access-control-')));
}

/** The answers a page from `origin` gets: the preflight of a JSON POST, and the POST itself (refused, 403), valid or not. */
async function expectNoCorsFor(client: ProtocolClient, origin: string): Promise<void> {
  const context = `origin ${JSON.stringify(origin)}`;
  const preflight = await client.request('/api/v1/notification', {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
  });
  expect(preflight.status, context).toBe(405);
  expect(preflight.json.request_id, context).toBe(preflight.headers['x-request-id']);
  expect(corsHeaders(preflight.headers), context).toEqual({});
  // A write from a refused origin is refused before anything runs (docs/security.md, "Cross-site writes").
  for (const body of [MARS_EXAMPLE, '{']) {
    const refused = await client.request('/api/v1/notification', { body, headers: { origin } });
    expect(refused.status, context).toBe(403);
    expect(refused.json.code, context).toBe('CROSS_ORIGIN_REQUEST_REFUSED');
    expect(refused.headers['x-request-id'], context).toMatch(UUID_V4);
    expect(refused.json.request_id, context).toBe(refused.headers['x-request-id']);
    expect(corsHeaders(refused.headers), context).toEqual({});
  }
}

describe.each(PROTOCOLS)('foreign origins over $name', ({ connect }) => {
  let client: ProtocolClient;
  beforeAll(() => {
    client = connect(`https://localhost:${server.port}`, certificates.ca);
  });
  afterAll(() => client.close());

  it('the listed origin is granted, so a missing header below is a refusal and not CORS switched off', async () => {
    const preflight = await client.request('/api/v1/notification', {
      method: 'OPTIONS',
      headers: { origin: CONSOLE, 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(CONSOLE);
    expect(preflight.headers['access-control-allow-credentials']).toBe('true');
  });

  it.each(LOOKALIKES)('refuses %j: no CORS header on preflight, notify or error, and no 5xx', async (origin) => {
    await expectNoCorsFor(client, origin);
  });

  it('gives a stream opened from a lookalike origin no CORS header at all (not even the reference *)', async () => {
    for (const origin of LOOKALIKES.slice(0, 8)) {
      const stream = await client.stream('/api/v1/watch', TRANSCRIPT_REQUEST, { origin });
      try {
        expect(stream.status).toBe(200);
        expect(corsHeaders(stream.headers), origin).toEqual({});
        expect((await stream.nextSignificant())?.json.type).toBe('connection_established');
      } finally {
        stream.close();
      }
    }
  });

  it('refuses random web origins', async () => {
    const origins = fc
      .webUrl({ validSchemes: ['http', 'https'] })
      .map((url) => new URL(url).origin)
      .filter((origin) => origin !== CONSOLE);
    await fc.assert(
      fc.asyncProperty(origins, (origin) => expectNoCorsFor(client, origin)),
      { numRuns: RUNS },
    );
  }, 120_000);

  it('refuses the listed origin with one printable character inserted, removed or replaced', async () => {
    const printable = fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code));
    const mutated = fc
      .tuple(fc.nat({ max: CONSOLE.length }), fc.constantFrom('insert', 'remove', 'replace'), printable)
      .map(([at, how, character]) => {
        if (how === 'insert') return CONSOLE.slice(0, at) + character + CONSOLE.slice(at);
        if (how === 'remove') return CONSOLE.slice(0, at) + CONSOLE.slice(at + 1);
        return CONSOLE.slice(0, at) + character + CONSOLE.slice(at + 1);
      })
      .filter((origin) => origin !== CONSOLE);
    await fc.assert(
      fc.asyncProperty(mutated, (origin) => expectNoCorsFor(client, origin)),
      { numRuns: RUNS },
    );
  }, 120_000);
});
