import { pino } from 'pino';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import type { NotificationBackend } from '../../src/backend/backend.js';
import { MemoryBackend } from '../../src/backend/memory/memory-backend.js';
import type { EventSchemaSource } from '../../src/schema/event-schema.js';
import { SchemaRegistry } from '../../src/schema/schema-registry.js';
import { ManualClock } from './manual-clock.js';
import { TEST_SCHEMAS } from './schemas.js';

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
  } = {},
): Promise<TestApp> {
  const clock = new ManualClock();
  const schemas = options.schemas ?? (TEST_SCHEMAS as unknown as Record<string, EventSchemaSource>);
  const registry = new SchemaRegistry(schemas, options.strict ?? true);
  const backend =
    options.backend ?? new MemoryBackend({ maxHistoryPerTopic: 100, maxTopics: 10_000, clock });
  const app = await buildApp({
    registry,
    backend,
    clock,
    logger: pino({ level: 'silent' }),
    maxBodyBytes: options.maxBodyBytes ?? 262_144,
  });
  return { app, backend, clock, registry };
}
