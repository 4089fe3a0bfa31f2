import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { BackendConfig } from '../config/model.js';
import type { NotificationBackend } from './backend.js';
import { MemoryBackend } from './memory/memory-backend.js';

/** Builds the configured backend (backends.md §3.1). */
export async function createBackend(config: BackendConfig, clock: Clock, logger: Logger): Promise<NotificationBackend> {
  switch (config.kind) {
    case 'in_memory': {
      const memory = config.in_memory;
      return new MemoryBackend({
        maxHistoryPerTopic: memory.max_history_per_topic,
        maxTopics: memory.max_topics,
        clock,
        onTopicEvicted: (topic, dropped) =>
          logger.warn(
            { event_name: 'backend.in_memory.topic.evicted', topic, dropped_messages: dropped },
            'Topic evicted to stay within max_topics',
          ),
      });
    }
    default:
      throw new Error(`Unknown notification_backend kind: ${config.kind}`);
  }
}
