import type { Logger } from 'pino';
import type { Clock } from '../time/clock.js';
import type { AppConfig } from '../config/model.js';
import { idempotencyWindowSeconds } from '../config/idempotency-model.js';
import { parseSize } from '../config/units.js';
import { validateJetStreamSettings } from '../config/validate.js';
import type { NotificationBackend, SchemaStorage } from '../backend/backend.js';
import { JetStreamBackend } from '../backend/jetstream/jetstream-backend.js';
import type { IdempotencyTelemetry } from '../idempotency/idempotency-telemetry.js';
import type { MemoryHistoryTelemetry } from '../backend/memory/history-telemetry.js';
import { MemoryBackend } from '../backend/memory/memory-backend.js';
import { openSequenceJournal, type SequenceJournal } from '../backend/memory/sequence-journal.js';

/**
 * Builds the configured backend (docs/design/rules/backends.md §3.1); rejects when it cannot start (stage C). The
 * in-memory backend reports its evictions and held bytes to `memoryTelemetry`.
 */
export async function createBackend(
  config: AppConfig,
  clock: Clock,
  logger: Logger,
  memoryTelemetry?: MemoryHistoryTelemetry,
  idempotencyTelemetry?: IdempotencyTelemetry,
): Promise<NotificationBackend> {
  const backend = config.notification_backend;
  const windowSec = idempotencyWindowSeconds(config.idempotency);
  switch (backend.kind) {
    case 'in_memory': {
      const memory = backend.in_memory;
      const journal = openJournal(memory, logger);
      return new MemoryBackend({
        ...(journal ? { journal } : {}),
        maxHistoryPerTopic: memory.max_history_per_topic,
        maxTopics: memory.max_topics,
        // Validated at startup (validateConfig), so it parses.
        maxTotalBytes: parseSize(memory.max_total_size),
        clock,
        onTopicEvicted: (topic, dropped) =>
          logger.warn(
            { event_name: 'backend.in_memory.topic.evicted', topic, dropped_messages: dropped },
            'Topic evicted to stay within max_topics',
          ),
        onTotalBytesReached: (maxTotalBytes) =>
          logger.warn(
            { event_name: 'backend.in_memory.total_size.reached', max_total_bytes: maxTotalBytes },
            'In-memory history reached max_total_size: the oldest notifications are evicted from now on',
          ),
        ...(memoryTelemetry ? { telemetry: memoryTelemetry } : {}),
        idempotency: {
          windowSec,
          maxKeys: config.idempotency.in_memory_max_keys,
          ...(idempotencyTelemetry ? { onEvicted: () => idempotencyTelemetry.evicted() } : {}),
        },
      });
    }
    case 'jetstream':
      validateJetStreamSettings(backend.jetstream);
      return JetStreamBackend.connect({
        settings: backend.jetstream,
        configured: configuredBases(config),
        logger,
        idempotency: { windowSec },
      });
    default:
      throw new Error(`Unknown notification_backend kind: ${backend.kind}`);
  }
}

/**
 * The in-memory numbering's journal (D40), or a startup warning saying what its absence risks. A
 * directory that cannot hold it throws, which refuses startup with one line.
 */
function openJournal(memory: AppConfig['notification_backend']['in_memory'], logger: Logger): SequenceJournal | undefined {
  if (!memory.persist_sequences) {
    logger.warn(
      { event_name: 'startup.sequences.not_persisted' },
      'notification_backend.in_memory.persist_sequences is false: after a restart every stream base is numbered from 1 again, so a client resuming from an earlier position is told its numbering was reset and replays everything still stored',
    );
    return undefined;
  }
  const journal = openSequenceJournal(memory.state_directory);
  const bases = journal.restored.size;
  logger.info(
    {
      event_name: 'startup.sequences.restored',
      state_directory: memory.state_directory,
      stream_bases: bases,
      after_machine_restart: journal.afterMachineRestart,
    },
    bases === 0
      ? 'Sequence journal opened: no earlier numbering to continue'
      : journal.afterMachineRestart
        ? `Sequence numbering of ${bases} stream bases continues after the reserved sequences: the machine restarted since they were written`
        : `Sequence numbering of ${bases} stream bases continues where the previous process stopped`,
  );
  return journal;
}

/** How each configured event type is stored, for the backend at startup and on reload. */
export function configuredBases(config: AppConfig): SchemaStorage[] {
  return Object.entries(config.notification_schema ?? {}).flatMap(([eventType, schema]) =>
    schema.topic
      ? [
          {
            eventType,
            base: schema.topic.base,
            bareTopics: schema.topic.key_order.length === 0,
            storagePolicy: schema.storage_policy,
          },
        ]
      : [],
  );
}
