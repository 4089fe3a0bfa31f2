import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { DEFAULT_CONFIG_FILE } from './paths.js';

/**
 * Configurations of the server under test. The event types are the ones of `config/config.yaml`
 * (the repository's example), so the bench validates what an operator's server validates.
 */

type Mapping = Record<string, unknown>;

function exampleSchemas(): Mapping {
  const document = parse(readFileSync(DEFAULT_CONFIG_FILE, 'utf8')) as { notification_schema?: Mapping };
  if (!document.notification_schema) throw new Error(`${DEFAULT_CONFIG_FILE} has no notification_schema`);
  return document.notification_schema;
}

/** One event type of config/config.yaml, optionally with extra settings (e.g. `storage_policy`). */
export function exampleSchema(eventType: string, extra: Mapping = {}): Mapping {
  const schema = exampleSchemas()[eventType];
  if (typeof schema !== 'object' || schema === null) throw new Error(`config/config.yaml has no event type '${eventType}'`);
  return { ...(schema as Mapping), ...extra };
}

export interface BenchConfigOptions {
  readonly schemas: Mapping;
  /** `in_memory`, or the URL of the NATS server for `jetstream`. */
  readonly backend: { readonly kind: 'in_memory' } | { readonly kind: 'jetstream'; readonly natsUrl: string };
  readonly watchEndpoint?: Mapping;
  /** Settings added to `application` (e.g. a process count), over the bench's own. */
  readonly application?: Mapping;
  /** Serve Prometheus metrics on this (free) port, as production does; off unless given. */
  readonly metrics?: number;
}

/**
 * Above the default `application.max_streams` (10,000) and `max_connections` (11,000): the
 * fan-out scenarios hold up to 15,000 streams on one server, each on its own connection, and the
 * connections above the stream limit stay for the notifies and probes.
 */
const BENCH_MAX_STREAMS = 19_000;
const BENCH_MAX_CONNECTIONS = 20_000;

/**
 * A production-like configuration: loopback on an ephemeral port, `info` logging (the default, one
 * line per notify), no authentication, no metrics; only the stream and connection caps are raised.
 */
export function benchConfig(options: BenchConfigOptions): Mapping {
  const backend =
    options.backend.kind === 'in_memory'
      ? { kind: 'in_memory', in_memory: {} }
      : { kind: 'jetstream', jetstream: { nats_url: options.backend.natsUrl, storage_type: 'file' } };
  return {
    application: {
      host: '127.0.0.1',
      port: 0,
      base_url: 'http://localhost:8000',
      max_connections: BENCH_MAX_CONNECTIONS,
      max_streams: BENCH_MAX_STREAMS,
      ...options.application,
    },
    logging: { level: 'info' },
    notification_backend: backend,
    notification_schema: options.schemas,
    watch_endpoint: options.watchEndpoint ?? {},
    ...(options.metrics ? { metrics: { enabled: true, host: '127.0.0.1', port: options.metrics } } : {}),
  };
}
