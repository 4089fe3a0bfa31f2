import { describe, expect, it } from 'vitest';
import type { NotificationBackend } from '../../src/backend/backend.js';
import type { IdempotencyClaim } from '../../src/backend/idempotency-records.js';
import { idempotencyRecordKey } from '../../src/idempotency/fingerprint.js';

/**
 * The record store of notify's `Idempotency-Key` (docs/backends.md "Idempotent notify"), part of the
 * backend contract: what the memory table and the JetStream bucket both promise. Record keys are
 * scoped by a fresh base, so runs on a shared NATS never meet.
 */
export function describeIdempotencyRecords(setup: () => Promise<{ backend: NotificationBackend; base: string }>): void {
  describe('idempotency records', () => {
    async function claim(backend: NotificationBackend, recordKey: string, fingerprint = 'f1'): Promise<IdempotencyClaim> {
      const begun = await backend.idempotency.begin(recordKey, fingerprint);
      if (begun.kind !== 'new') throw new Error(`expected a new claim, got ${begun.kind}`);
      return begun.claim;
    }

    it('claims an unknown key once: a second begin sees the first still in progress', async () => {
      const { backend, base } = await setup();
      const key = idempotencyRecordKey(base, 'k1');
      const first = await claim(backend, key);
      expect(first.recordKey).toBe(key);
      expect(await backend.idempotency.begin(key, 'f1')).toEqual({ kind: 'in_progress' });
    });

    it('of concurrent begins on one key, exactly one claims it', async () => {
      const { backend, base } = await setup();
      const key = idempotencyRecordKey(base, 'race');
      const answers = await Promise.all(Array.from({ length: 8 }, () => backend.idempotency.begin(key, 'f1')));
      expect(answers.filter((answer) => answer.kind === 'new')).toHaveLength(1);
      expect(answers.filter((answer) => answer.kind === 'in_progress')).toHaveLength(7);
    });

    it('answers a completed key from its record, and refuses another fingerprint', async () => {
      const { backend, base } = await setup();
      const key = idempotencyRecordKey(base, 'k2');
      await backend.idempotency.complete(await claim(backend, key), { processedAt: '2026-03-01T12:00:00Z', sequence: 5 });
      expect(await backend.idempotency.begin(key, 'f1')).toEqual({ kind: 'replay', processedAt: '2026-03-01T12:00:00Z', sequence: 5 });
      expect(await backend.idempotency.begin(key, 'f2')).toEqual({ kind: 'reused' });
    });

    it('records the fingerprint of what was stored when completing with another one', async () => {
      const { backend, base } = await setup();
      const key = idempotencyRecordKey(base, 'k3');
      await backend.idempotency.complete(await claim(backend, key, 'mine'), { processedAt: 't', sequence: 1, fingerprint: 'stored' });
      expect((await backend.idempotency.begin(key, 'stored')).kind).toBe('replay');
      expect((await backend.idempotency.begin(key, 'mine')).kind).toBe('reused');
    });

    it('forgets an abandoned claim, so the next request claims the key anew', async () => {
      const { backend, base } = await setup();
      const key = idempotencyRecordKey(base, 'k4');
      await backend.idempotency.abandon(await claim(backend, key));
      const again = await backend.idempotency.begin(key, 'f2');
      expect(again.kind).toBe('new');
    });

    it('keeps keys of different scopes apart', async () => {
      const { backend, base } = await setup();
      await claim(backend, idempotencyRecordKey(base, 'same'));
      expect((await backend.idempotency.begin(idempotencyRecordKey(`${base}_other`, 'same'), 'f1')).kind).toBe('new');
    });
  });
}
