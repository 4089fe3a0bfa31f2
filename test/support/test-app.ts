import { pino, type Logger } from 'pino';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import type { NotificationBackend } from '../../src/backend/backend.js';
import { MemoryBackend } from '../../src/backend/memory/memory-backend.js';
import type { AvisoMetrics } from '../../src/metrics/aviso-metrics.js';
import type { EventSchemaSource } from '../../src/schema/event-schema.js';
import { SchemaRegistry } from '../../src/schema/schema-registry.js';
import {
  NOTIFICATION_ENDPOINT_DEFAULTS,
  WATCH_ENDPOINT_DEFAULTS,
  type AuthConfig,
  type NotificationEndpointConfig,
  type WatchEndpointConfig,
} from '../../src/config/model.js';
import { ManualClock } from './manual-clock.js';
import { TEST_SCHEMAS } from './schemas.js';

export const DEFAULT_WATCH_ENDPOINT: WatchEndpointConfig = { ...WATCH_ENDPOINT_DEFAULTS, replay_batch_delay_ms: 0 };

export interface TestApp {
  readonly app: FastifyInstance;
  readonly backend: NotificationBackend;
  readonly clock: ManualClock;
  readonly registry: SchemaRegistry;
}

/** The real app wired to an in-memory backend and a manual clock, for `app.inject` tests. */
export async function buildTestApp(
  options: {
    schemas?: Readonly<Record<string, EventSchemaSource>>;
    strict?: boolean;
    backend?: NotificationBackend;
    maxBodyBytes?: number;
    watchEndpoint?: Partial<WatchEndpointConfig>;
    /** Batch notify's limits (D48); the defaults for what is not given. */
    notificationEndpoint?: Partial<NotificationEndpointConfig>;
    clock?: ManualClock;
    baseUrl?: string;
    auth?: AuthConfig;
    metrics?: AvisoMetrics;
    /** Where the app logs; silent unless given. */
    logger?: Logger;
  } = {},
): Promise<TestApp> {
  const clock = options.clock ?? new ManualClock();
  const schemas = options.schemas ?? (TEST_SCHEMAS as unknown as Record<string, EventSchemaSource>);
  const registry = new SchemaRegistry(schemas, options.strict ?? true);
  const backend = options.backend ?? new MemoryBackend({ maxHistoryPerTopic: 100, maxTopics: 10_000, clock });
  const app = await buildApp({
    registry,
    backend,
    clock,
    logger: options.logger ?? pino({ level: 'silent' }),
    maxBodyBytes: options.maxBodyBytes ?? 262_144,
    baseUrl: options.baseUrl ?? 'http://localhost:8000',
    watchEndpoint: { ...DEFAULT_WATCH_ENDPOINT, ...options.watchEndpoint },
    notificationEndpoint: { ...NOTIFICATION_ENDPOINT_DEFAULTS, ...options.notificationEndpoint },
    ...(options.auth ? { auth: options.auth } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  return { app, backend, clock, registry };
}

/** Listens on an ephemeral loopback port and returns the base URL, for tests that stream over real HTTP. */
export async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no address');
  return `http://127.0.0.1:${address.port}`;
}
