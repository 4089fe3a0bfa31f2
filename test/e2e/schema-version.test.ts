import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../support/http.js';
import { TEST_SCHEMAS, serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient } from '../support/sse-client.js';
import { SCHEMA_VERSION } from '../support/transcript.js';

/**
 * The schema configuration's version (D43): `GET /api/v1/schema` and the opening frame of every
 * stream carry the same value, a reload that changes the schemas changes it, and one that leaves
 * them as they were keeps it.
 */

describe('schema version', () => {
  let server: RunningServer;
  const config = (schemas: Record<string, unknown>, level = 'info') => serverConfig({ notification_schema: schemas, logging: { level } });

  beforeAll(async () => {
    server = await startServer({ config: config(TEST_SCHEMAS) });
  });
  afterAll(async () => {
    await server.stop();
  });

  async function listed(): Promise<string> {
    const response = await request(`${server.url}/api/v1/schema`);
    expect(response.json.schema_version).toMatch(SCHEMA_VERSION);
    const one = await request(`${server.url}/api/v1/schema/mars`);
    expect(one.json.schema_version).toBe(response.json.schema_version);
    return response.json.schema_version as string;
  }

  async function opening(path: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const client = await SseClient.open(`${server.url}${path}`, { event_type: 'mars', identifier: { class: 'od' }, ...body });
    try {
      expect(client.status).toBe(200);
      return (await client.next())?.json ?? {};
    } finally {
      client.close();
    }
  }

  async function reload(next: Record<string, unknown>): Promise<void> {
    server.rewriteConfig(next);
    const response = await request(`${server.url}/api/v1/admin/reload`, { method: 'POST' });
    expect(response.status).toBe(200);
  }

  it('is the same on the schema API and in the opening frame of a watch and of a replay', async () => {
    const version = await listed();
    const live = await opening('/api/v1/watch', {});
    expect(live.type).toBe('connection_established');
    expect(live.schema_version).toBe(version);
    const replay = await opening('/api/v1/replay', { from_id: '0' });
    expect(replay.type).toBe('replay_started');
    expect(replay.schema_version).toBe(version);
  });

  it('stays the same through a reload that changes no schema, and changes with one that does', async () => {
    const before = await listed();
    await reload(config(TEST_SCHEMAS, 'debug'));
    expect(await listed()).toBe(before);
    const changed = {
      ...TEST_SCHEMAS,
      mars: { ...TEST_SCHEMAS.mars, identifier: { ...TEST_SCHEMAS.mars.identifier, param: { type: 'StringHandler', required: false } } },
    };
    await reload(config(changed));
    const after = await listed();
    expect(after).not.toBe(before);
    expect((await opening('/api/v1/watch', {})).schema_version).toBe(after);
  });
});
