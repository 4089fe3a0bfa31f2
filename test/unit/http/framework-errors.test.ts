import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { MARS_EXAMPLE } from '../../support/schemas.js';
import { UUID_V4 } from '../../support/http.js';
import { buildTestApp } from '../../support/test-app.js';

/**
 * Requests fastify would answer by itself, before any hook, in its own body shape and without a
 * request id (found by test/reliability/hostile-input.test.ts): a malformed percent escape in the
 * URL, an over-long path parameter, and a Content-Type it cannot parse.
 */

let app: FastifyInstance;
beforeAll(async () => {
  ({ app } = await buildTestApp());
});
afterAll(() => app.close());

function expectApiError(
  response: { statusCode: number; headers: Record<string, unknown>; body: string },
  status: number,
  code: string,
): void {
  expect(response.statusCode, response.body).toBe(status);
  const body = JSON.parse(response.body) as Record<string, unknown>;
  expect(body.code).toBe(code);
  expect(body.request_id).toMatch(UUID_V4);
  expect(response.headers['x-request-id']).toBe(body.request_id);
  expect(Object.keys(body).sort()).toEqual(['code', 'error', 'message', 'request_id']);
}

describe('URLs the router refuses', () => {
  it.each(['/api/v1/schema/%', '/api/v1/schema/%zz', '/api/v1/admin/notification/%E0%A4%A'])(
    '%s is 400 BAD_REQUEST in the API error shape',
    async (url) => {
      expectApiError(await app.inject({ method: 'GET', url }), 400, 'BAD_REQUEST');
    },
  );

  it('a path parameter over the router limit is 414 URI_TOO_LONG in the API error shape', async () => {
    expectApiError(await app.inject({ method: 'GET', url: `/api/v1/schema/${'m'.repeat(200)}` }), 414, 'URI_TOO_LONG');
    expectApiError(await app.inject({ method: 'DELETE', url: `/api/v1/admin/notification/mars@${'1'.repeat(200)}` }), 414, 'URI_TOO_LONG');
  });
});

describe('Content-Type values fastify cannot parse (api.md: bodies are read whatever the type says)', () => {
  it.each(['', ' ', ';;;', 'application/', '/json', 'text', 'application/json; charset'])(
    'Content-Type %j: a valid notify is still stored',
    async (contentType) => {
      const response = await app.inject({
        method: 'POST',
        url: '/api/v1/notification',
        headers: { 'content-type': contentType },
        payload: JSON.stringify(MARS_EXAMPLE),
      });
      expect(response.statusCode, response.body).toBe(200);
    },
  );

  it('wipe-stream still judges the media type the client sent', async () => {
    const wrong = await app.inject({
      method: 'DELETE',
      url: '/api/v1/admin/wipe/stream',
      headers: { 'content-type': ';;;' },
      payload: '{"stream_name":"mars"}',
    });
    expect(wrong.statusCode).toBe(400);
    expect(JSON.parse(wrong.body)).toMatchObject({ success: false, message: 'Content type error: expected application/json' });
    const right = await app.inject({
      method: 'DELETE',
      url: '/api/v1/admin/wipe/stream',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      payload: '{"stream_name":"mars"}',
    });
    expect(right.statusCode).toBe(200);
  });
});
