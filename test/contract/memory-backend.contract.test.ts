import { MemoryBackend } from '../../src/backend/memory/memory-backend.js';
import { systemClock } from '../../src/time/clock.js';
import { describeBackendContract, uniqueBaseGenerator } from './backend-contract.js';

describeBackendContract('MemoryBackend', {
  async create({ keepHistory }) {
    // maxHistoryPerTopic 1 is the configured default (docs/design/rules/backends.md §6.1).
    return new MemoryBackend({ maxHistoryPerTopic: keepHistory ? 100 : 1, maxTopics: 10_000, clock: systemClock });
  },
  uniqueBase: uniqueBaseGenerator('mem'),
});
