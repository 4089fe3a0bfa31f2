import { afterAll, beforeAll } from 'vitest';
import { serverConfig } from './schemas.js';
import { startNatsServer, type NatsServerProcess } from './nats-server.js';

export type BackendKind = 'in_memory' | 'jetstream';
export const BACKEND_KINDS: readonly BackendKind[] = ['in_memory', 'jetstream'];

/**
 * A backend for an end-to-end suite: in memory, or JetStream on a private nats-server with a
 * fresh store, so suites never see each other's streams. `config` gives the server config with
 * the same retention semantics on both (history per topic kept: `max_history_per_topic` in
 * memory, `allow_duplicates` on JetStream).
 */
export class BackendUnderTest {
  private nats: NatsServerProcess | undefined;

  /** `existingNatsUrl`: use that NATS instead of starting a private one. */
  constructor(
    readonly kind: BackendKind,
    private readonly existingNatsUrl?: string,
  ) {}

  async start(): Promise<void> {
    if (this.kind === 'jetstream' && !this.existingNatsUrl) this.nats = await startNatsServer();
  }

  async stop(): Promise<void> {
    await this.nats?.stop();
  }

  get natsUrl(): string {
    const url = this.existingNatsUrl ?? this.nats?.url;
    if (!url) throw new Error('no NATS server for this backend (in memory, or not started)');
    return url;
  }

  /** `serverConfig(overrides)` with this backend; every schema keeps history on JetStream. */
  config(overrides: Record<string, unknown> = {}): Record<string, unknown> {
    const config = serverConfig(overrides);
    if (this.kind === 'in_memory') return config;
    const schemas = (config.notification_schema ?? {}) as Record<string, Record<string, unknown>>;
    return {
      ...config,
      notification_backend: {
        kind: 'jetstream',
        jetstream: { nats_url: this.natsUrl, reconnect_delay_ms: 200, max_reconnect_attempts: 0 },
      },
      notification_schema: Object.fromEntries(
        Object.entries(schemas).map(([name, schema]) => [
          name,
          { ...schema, storage_policy: { allow_duplicates: true, ...(schema.storage_policy as object | undefined) } },
        ]),
      ),
    };
  }
}

/**
 * A backend for the enclosing `describe` block: started before its tests, stopped after. Each
 * block gets its own NATS store, so sequences start at 1 as they do for a fresh in-memory server.
 */
export function useBackend(kind: BackendKind): BackendUnderTest {
  const backend = new BackendUnderTest(kind);
  beforeAll(() => backend.start());
  afterAll(() => backend.stop());
  return backend;
}
