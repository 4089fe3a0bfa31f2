import { pino } from 'pino';
import { buildApp } from '../src/app.js';
import { MemoryBackend } from '../src/backend/memory/memory-backend.js';
import { systemClock } from '../src/time/clock.js';
import { WATCH_ENDPOINT_DEFAULTS } from '../src/config/model.js';
import { SchemaRegistry } from '../src/schema/schema-registry.js';

export const OPENAPI_DOCUMENT_PATH = 'schemas/openapi.json';

/**
 * The OpenAPI document as the server serves it at `/api-docs/openapi.json`, rendered from the
 * routes of an app with no configured schemas (the document does not depend on configuration).
 */
export async function renderOpenApiDocument(): Promise<string> {
  const app = await buildApp({
    registry: new SchemaRegistry({}, false),
    backend: new MemoryBackend({ maxHistoryPerTopic: 1, maxTopics: 1, clock: systemClock }),
    clock: systemClock,
    logger: pino({ level: 'silent' }),
    maxBodyBytes: 262_144,
    baseUrl: 'http://localhost',
    watchEndpoint: WATCH_ENDPOINT_DEFAULTS,
    staticFilesPath: '/nonexistent',
    // Documents the reload route; the document is rendered, never served from this app.
    reloader: { attachAuthenticator: () => undefined, reload: async () => ({ ok: false, message: 'not a running server' }) },
  });
  try {
    return `${JSON.stringify(app.swagger(), null, 2)}\n`;
  } finally {
    await app.close();
  }
}
