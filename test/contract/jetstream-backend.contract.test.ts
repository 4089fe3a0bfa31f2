import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { pino } from 'pino';
import { beforeAll } from 'vitest';
import type { NotificationBackend } from '../../src/backend/backend.js';
import { JetStreamBackend } from '../../src/backend/jetstream/jetstream-backend.js';
import type { JetStreamConfig } from '../../src/config/model.js';
import { SHARED_NATS_URL, requireSharedNats } from '../support/nats-server.js';
import { describeBackendContract, uniqueBaseGenerator } from './backend-contract.js';

/**
 * The backend contract on the NATS server CI provides at 127.0.0.1:4222. Every test uses fresh
 * bases, so runs never see each other's data; the streams they created are deleted afterwards.
 */
const settings: JetStreamConfig = {
  nats_url: SHARED_NATS_URL,
  timeout_seconds: 5,
  retry_attempts: 1,
  storage_type: 'memory',
  retention_policy: 'limits',
  discard_policy: 'old',
  enable_auto_reconnect: true,
  max_reconnect_attempts: 0,
  reconnect_delay_ms: 200,
  publish_retry_attempts: 3,
  publish_retry_base_delay_ms: 50,
};

const created: NotificationBackend[] = [];
const usedBases = new Set<string>();
const nextBase = uniqueBaseGenerator('ct');

beforeAll(async () => {
  await requireSharedNats();
});

describeBackendContract('JetStreamBackend', {
  async create({ keepHistory, bases }) {
    for (const base of bases) usedBases.add(base);
    const backend = await JetStreamBackend.connect({
      settings,
      configured: bases.map((base) => ({
        eventType: base,
        base,
        bareTopics: true,
        storagePolicy: keepHistory ? { allow_duplicates: true } : undefined,
      })),
      logger: pino({ level: 'silent' }),
    });
    created.push(backend);
    return backend;
  },
  uniqueBase: nextBase,
  async close() {
    for (const backend of created.splice(0)) await backend.shutdown().catch(() => undefined);
    const nc = await connect({ servers: SHARED_NATS_URL });
    try {
      const jsm = await jetstreamManager(nc);
      for await (const name of jsm.streams.names()) {
        if ([...usedBases].some((base) => name === base.toUpperCase() || name.startsWith(`${base.toUpperCase()}_`))) {
          await jsm.streams.delete(name).catch(() => undefined);
        }
      }
    } finally {
      await nc.close();
    }
  },
});
