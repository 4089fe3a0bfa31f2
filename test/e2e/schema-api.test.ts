import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../support/http.js';
import { serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SCHEMA_VERSION } from '../support/transcript.js';

describe('schema API with schemas configured', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({
      config: serverConfig({
        notification_schema: {
          ...(serverConfig().notification_schema as Record<string, unknown>),
          secret_stream: {
            topic: { base: 'secret', key_order: ['class'] },
            identifier: { class: { type: 'StringHandler', required: true } },
            payload: { required: false },
            max_historical_notifications: 5,
          },
        },
      }),
    });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('lists every schema, sorted, with its public view', async () => {
    const response = await request(`${server.url}/api/v1/schema`);
    expect(response.status).toBe(200);
    expect(response.json.status).toBe('success');
    expect(response.json.event_types).toEqual(['dissemination', 'extreme_event', 'mars', 'secret_stream', 'sensor_cloud', 'test_polygon']);
    expect(response.json.total_schemas).toBe(6);
    expect(response.json).not.toHaveProperty('message');
    expect(response.json).not.toHaveProperty('request_id');
  });

  it('shows one schema with handler settings, nulls for unset parameters, keys sorted', async () => {
    const response = await request(`${server.url}/api/v1/schema/mars`);
    expect(response.status).toBe(200);
    expect(response.text).toBe(
      JSON.stringify({
        event_type: 'mars',
        schema: {
          identifier: {
            class: {
              description: 'MARS class, for example od for operational data.',
              max_length: 2,
              required: true,
              type: 'StringHandler',
            },
            date: { canonical_format: '%Y%m%d', required: false, type: 'DateHandler' },
            domain: { required: false, type: 'EnumHandler', values: 'abcdefghijklmnopqrstuvwxyz'.split('') },
            expver: { default: '0001', required: false, type: 'ExpverHandler' },
            step: { range: [0, 100000], required: false, type: 'IntHandler' },
            stream: { max_length: null, required: false, type: 'StringHandler' },
            time: { required: false, type: 'TimeHandler' },
          },
          payload: { required: false },
        },
        schema_version: response.json.schema_version,
        status: 'success',
      }),
    );
    expect(response.json.schema_version).toMatch(SCHEMA_VERSION);
  });

  it('shows max_points of a point cloud and a null payload when the schema has no payload block', async () => {
    const cloud = await request(`${server.url}/api/v1/schema/sensor_cloud`);
    expect((cloud.json.schema as { identifier: Record<string, unknown> }).identifier.point_cloud).toEqual({
      max_points: 3,
      required: true,
      type: 'PointCloudHandler',
    });
    const diss = await request(`${server.url}/api/v1/schema/dissemination`);
    expect((diss.json.schema as Record<string, unknown>).payload).toBeNull();
  });

  it('never exposes topic, storage, auth or replay-cap settings', async () => {
    const response = await request(`${server.url}/api/v1/schema/secret_stream`);
    expect(response.text).not.toMatch(/topic|key_order|secret\b|max_historical_notifications|storage_policy|auth/);
  });

  it('answers 404 with the sorted available types for an unknown event type', async () => {
    const response = await request(`${server.url}/api/v1/schema/event_does_not_exist`);
    expect(response.status).toBe(404);
    expect(response.json).toEqual({
      available_types: ['dissemination', 'extreme_event', 'mars', 'secret_stream', 'sensor_cloud', 'test_polygon'],
      message: "Event type 'event_does_not_exist' not found",
      request_id: response.headers.get('x-request-id'),
      status: 'error',
    });
  });

  it('matches the event type exactly and case-sensitively', async () => {
    expect((await request(`${server.url}/api/v1/schema/MARS`)).status).toBe(404);
  });
});

describe('schema API without notification_schema', () => {
  let server: RunningServer;
  beforeAll(async () => {
    const { notification_schema: _schemas, ...config } = serverConfig();
    server = await startServer({ config });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('says no schema is configured', async () => {
    const response = await request(`${server.url}/api/v1/schema`);
    expect(response.json).toEqual({
      event_types: [],
      message: 'No notification schema configured',
      schema: {},
      schema_version: response.json.schema_version,
      status: 'success',
      total_schemas: 0,
    });
    expect(response.json.schema_version).toMatch(SCHEMA_VERSION);
  });

  it('answers 404 without available_types for any event type', async () => {
    const response = await request(`${server.url}/api/v1/schema/mars`);
    expect(response.status).toBe(404);
    expect(response.json).toEqual({
      message: 'No notification schema configured',
      request_id: response.headers.get('x-request-id'),
      status: 'error',
    });
  });

  it('accepts any event type on the generic path and stores it', async () => {
    const response = await fetch(`${server.url}/api/v1/notification`, {
      method: 'POST',
      body: JSON.stringify({ event_type: 'scratch', identifier: { b: 2, a: 'x.y' } }),
    });
    expect(response.status).toBe(200);
  });

  it('rejects null and empty generic identifier values', async () => {
    const post = (identifier: unknown) =>
      request(`${server.url}/api/v1/notification`, {
        method: 'POST',
        body: JSON.stringify({ event_type: 'scratch', identifier }),
      });
    expect((await post({ a: '' })).json.message).toBe("Field 'a' cannot be empty");
    expect((await post({ a: null })).json.message).toBe("Field 'a' cannot be null");
    expect((await post({ a: { eq: 1 } })).json.message).toBe("Field 'a' constraint object is not supported for notify operation");
  });
});
