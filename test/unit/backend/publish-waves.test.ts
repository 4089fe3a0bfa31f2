import { describe, expect, it } from 'vitest';
import { NotificationTooLargeError, type NotificationToStore, type PublishResult } from '../../../src/backend/backend.js';
import { publishInWaves } from '../../../src/backend/publish-waves.js';

/**
 * D48's pipelining: a batch's publishes go out in waves of distinct topics, every publish of a
 * wave sent before any ack is awaited; a repeated topic waits for the wave before it, and a
 * failure other than "too large" leaves the later waves unsent.
 */

/** A publish whose ack the test gives by hand, recording the order publishes were sent in. */
class ManualAcks {
  readonly sent: string[] = [];
  private readonly pending = new Map<string, { resolve: (result: PublishResult) => void; reject: (error: unknown) => void }>();
  private next = 1;

  readonly publish = (notification: NotificationToStore): Promise<PublishResult> => {
    this.sent.push(notification.payload);
    return new Promise((resolve, reject) => this.pending.set(notification.payload, { resolve, reject }));
  };

  ack(payload: string): void {
    this.pending.get(payload)?.resolve({ sequence: this.next++ });
  }

  fail(payload: string, error: unknown): void {
    this.pending.get(payload)?.reject(error);
  }
}

const item = (topic: string, payload: string): NotificationToStore => ({ topic, payload });
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('publishInWaves', () => {
  it('sends a wave of distinct topics at once and a repeated topic only after the wave before it', async () => {
    const acks = new ManualAcks();
    const batch = [item('t.a', '0'), item('t.b', '1'), item('t.c', '2'), item('t.a', '3'), item('t.d', '4')];
    const done = publishInWaves(batch, acks.publish);
    await settle();
    expect(acks.sent).toEqual(['0', '1', '2']);
    acks.ack('1');
    acks.ack('0');
    await settle();
    expect(acks.sent).toEqual(['0', '1', '2']);
    acks.ack('2');
    await settle();
    expect(acks.sent).toEqual(['0', '1', '2', '3', '4']);
    acks.ack('3');
    acks.ack('4');
    const outcomes = await done;
    expect(outcomes.map((outcome) => (outcome.stored ? outcome.sequence : 'failed'))).toEqual([2, 1, 3, 4, 5]);
  });

  it('sends no later wave after a store failure, answering its items with that failure, unsent', async () => {
    const acks = new ManualAcks();
    const failure = new Error('NATS away');
    const done = publishInWaves([item('t.a', '0'), item('t.b', '1'), item('t.a', '2'), item('t.c', '3')], acks.publish);
    await settle();
    acks.fail('0', failure);
    acks.ack('1');
    const outcomes = await done;
    expect(acks.sent).toEqual(['0', '1']);
    expect(outcomes).toEqual([
      { stored: false, error: failure, sent: true },
      { stored: true, sequence: 1 },
      { stored: false, error: failure, sent: false },
      { stored: false, error: failure, sent: false },
    ]);
  });

  it('goes on past a notification too large for the backend, which fails alone', async () => {
    const acks = new ManualAcks();
    const tooLarge = new NotificationTooLargeError(2_000_000, 1_048_576);
    const done = publishInWaves([item('t.a', '0'), item('t.a', '1'), item('t.a', '2')], acks.publish);
    await settle();
    acks.ack('0');
    await settle();
    acks.fail('1', tooLarge);
    await settle();
    acks.ack('2');
    const outcomes = await done;
    expect(acks.sent).toEqual(['0', '1', '2']);
    expect(outcomes.map((outcome) => outcome.stored)).toEqual([true, false, true]);
  });

  it('sends the notifications of a topic that names no predecessor together, beside a chained one', async () => {
    const acks = new ManualAcks();
    const batch = [item('kept.a', '0'), item('kept.a', '1'), item('t.a', '2'), item('kept.a', '3'), item('t.a', '4')];
    const done = publishInWaves(batch, acks.publish, (notification) => !notification.topic.startsWith('kept.'));
    await settle();
    // Everything up to the chained topic's repeat, then the rest once that wave was acknowledged.
    expect(acks.sent).toEqual(['0', '1', '2', '3']);
    for (const payload of ['0', '1', '2', '3']) acks.ack(payload);
    await settle();
    expect(acks.sent).toEqual(['0', '1', '2', '3', '4']);
    acks.ack('4');
    expect((await done).map((outcome) => outcome.stored)).toEqual([true, true, true, true, true]);
  });
});
