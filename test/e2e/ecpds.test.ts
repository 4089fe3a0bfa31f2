import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECPDS_SERVICE_ACCOUNT, FakeEcpds } from '../support/fake-ecpds.js';
import { postJson } from '../support/http.js';
import { serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient } from '../support/sse-client.js';

/** The ECPDS destination plugin through the real server (docs/design/rules/operations.md §2.10), trusted-proxy mode. */
const SECRET = 'ecpds-e2e-jwt-secret';

async function token(username: string, roles: string[] = ['reader']): Promise<string> {
  return new SignJWT({ username, realm: 'localrealm', roles })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(SECRET));
}

let ecpds: FakeEcpds;
let server: RunningServer;

beforeAll(async () => {
  ecpds = await new FakeEcpds().start();
  server = await startServer({
    config: serverConfig({
      auth: {
        enabled: true,
        mode: 'trusted_proxy',
        jwt_secret: SECRET,
        admin_roles: { localrealm: ['admin'] },
      },
      ecpds: {
        username: ECPDS_SERVICE_ACCOUNT.username,
        password: ECPDS_SERVICE_ACCOUNT.password,
        servers: [ecpds.url],
        match_key: 'destination',
      },
      notification_schema: {
        dissemination: {
          topic: { base: 'diss', key_order: ['destination', 'class'] },
          identifier: {
            destination: { type: 'StringHandler', required: true },
            class: { type: 'StringHandler', required: false },
          },
          auth: { required: true, plugins: ['ecpds'] },
        },
      },
    }),
  });
});
afterAll(async () => {
  await server.stop();
  await ecpds.stop();
});

async function watch(username: string, destination: string, roles?: string[]): Promise<SseClient> {
  return SseClient.open(
    `${server.url}/api/v1/watch`,
    { event_type: 'dissemination', identifier: { destination } },
    { headers: { authorization: `Bearer ${await token(username, roles)}` } },
  );
}

describe('ECPDS destination check on watch/replay', () => {
  it("allows a destination in the user's ECPDS list", async () => {
    const client = await watch('ecpds-user-allowed', 'CIP');
    expect(client.status).toBe(200);
    expect((await client.next())?.json.type).toBe('connection_established');
    client.close();
  });

  it('denies a destination that is not in the list with 403 and the exact message', async () => {
    const client = await watch('ecpds-user-denied', 'BAR');
    expect(client.status).toBe(403);
    expect(JSON.parse(client.errorBody ?? '')).toEqual({
      code: 'FORBIDDEN',
      error: 'forbidden',
      message: "User 'ecpds-user-denied' does not have access to destination 'BAR'",
      request_id: client.headers.get('x-request-id'),
    });
  });

  it('denies a request that does not name one destination', async () => {
    const client = await watch('ecpds-user-wildcard', '*');
    expect(client.status).toBe(403);
    expect(JSON.parse(client.errorBody ?? '').message).toBe("Required field 'destination' not found in request identifiers");
    expect(ecpds.callsFor('ecpds-user-wildcard')).toBe(0);
  });

  it('answers 503 when ECPDS cannot be reached for the user', async () => {
    const client = await watch('ecpds-unavailable', 'CIP');
    expect(client.status).toBe(503);
    expect(JSON.parse(client.errorBody ?? '')).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: 'ECPDS service is inaccessible',
    });
  });

  it('lets admins through without asking ECPDS', async () => {
    const client = await watch('ecpds-admin', 'ANYWHERE', ['admin']);
    expect(client.status).toBe(200);
    client.close();
    expect(ecpds.callsFor('ecpds-admin')).toBe(0);
  });

  it("caches a user's list: a second check makes no upstream call", async () => {
    const first = await watch('ecpds-user-cached', 'FOO');
    const second = await watch('ecpds-user-cached', 'CIP');
    expect([first.status, second.status]).toEqual([200, 200]);
    first.close();
    second.close();
    expect(ecpds.callsFor('ecpds-user-cached')).toBe(1);
  });

  it('never checks notify', async () => {
    const response = await postJson(
      `${server.url}/api/v1/notification`,
      { event_type: 'dissemination', identifier: { destination: 'BAR', class: 'od' } },
      { authorization: `Bearer ${await token('ecpds-producer', ['admin'])}` },
    );
    expect(response.status).toBe(200);
    expect(ecpds.callsFor('ecpds-producer')).toBe(0);
  });

  it('never logs the ECPDS service password', () => {
    expect(JSON.stringify(server.logs)).not.toContain(ECPDS_SERVICE_ACCOUNT.password);
    expect(server.stderr()).not.toContain(ECPDS_SERVICE_ACCOUNT.password);
  });
});
