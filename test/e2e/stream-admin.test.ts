import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../support/http.js';
import { serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient } from '../support/sse-client.js';

describe('admin streams (first cut)', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ config: serverConfig() });
  });
  afterAll(async () => {
    await server.stop();
  });
  it('lists an open watch and closes it with end_of_stream, cause operator_closed', async () => {
    const client = await SseClient.open(`${server.url}/api/v1/watch`, { event_type: 'mars', identifier: { class: 'od' } });
    expect(client.status).toBe(200);
    const list = await request(`${server.url}/api/v1/admin/streams`);
    expect(list.status).toBe(200);
    const streams = list.json.streams as { id: string; filter: unknown }[];
    expect(streams).toHaveLength(1);
    expect(streams[0]?.filter).toEqual({ class: 'od' });
    const id = streams[0]?.id as string;
    const closed = await request(`${server.url}/api/v1/admin/streams/${id}`, { method: 'DELETE' });
    expect(closed.status).toBe(200);
    const events = await client.rest();
    expect(events.at(-1)?.json).toMatchObject({ reason: 'end_of_stream', cause: 'operator_closed' });
  });
});
