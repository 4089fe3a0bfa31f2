import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { StoredNotification } from '../../../src/backend/backend.js';
import { LivePhase, type LiveStreamOwner } from '../../../src/streaming/live-phase.js';
import type { StreamOutput } from '../../../src/streaming/stream-output.js';
import type { SlowConsumerTrigger, StreamRequest, StreamSettings } from '../../../src/streaming/stream-request.js';

/**
 * The live phase on its own: what arrives before the phase begins is held back and sent in order
 * when it begins, then each notification as it comes; nothing after the stream stopped; a backlog
 * past the stream's bound ends it as a slow consumer; a failing predicate ends the live feed.
 */
function notification(sequence: number, topic = 'mars.od'): StoredNotification {
  return { sequence, topic, payload: 'null', timestampNs: BigInt(sequence) * 1_000_000n };
}

/** The parts of a stream output the live phase uses: it records what was sent and can refuse. */
class RecordingOutput {
  readonly sent: number[] = [];
  refuseFrom = Number.POSITIVE_INFINITY;

  sendNotification(event: string, sent: StoredNotification): boolean {
    expect(event).toBe('live-notification');
    if (sent.sequence >= this.refuseFrom) return false;
    this.sent.push(sent.sequence);
    return true;
  }
}

class RecordingOwner implements LiveStreamOwner {
  readonly slowConsumers: SlowConsumerTrigger[] = [];
  readonly ends: (Error | undefined)[] = [];

  closeSlowConsumer(trigger: SlowConsumerTrigger): void {
    this.slowConsumers.push(trigger);
  }

  liveEnded(error?: Error): void {
    this.ends.push(error);
  }
}

function livePhase(options: { predicate?: (n: StoredNotification) => boolean; maxBufferedEvents?: number } = {}) {
  const owner = new RecordingOwner();
  const lags: bigint[] = [];
  const request = { predicate: options.predicate ?? (() => true) } as unknown as StreamRequest;
  const settings = { maxBufferedEvents: options.maxBufferedEvents ?? 10 } as StreamSettings;
  const phase = new LivePhase(owner, request, {
    logger: pino({ level: 'silent' }),
    settings,
    deliveryLag: (acceptedAtNs) => lags.push(acceptedAtNs),
  });
  const output = new RecordingOutput();
  return { phase, owner, lags, output, asOutput: output as unknown as StreamOutput };
}

describe('LivePhase', () => {
  it('holds back what arrives before the phase begins and sends it in order first', () => {
    const { phase, output, asOutput, lags } = livePhase();
    phase.deliver(notification(1));
    phase.deliver(notification(2));
    expect(output.sent).toEqual([]);
    expect(phase.enter(asOutput)).toBe(true);
    expect(output.sent).toEqual([1, 2]);
    phase.deliver(notification(3));
    expect(output.sent).toEqual([1, 2, 3]);
    expect(lags).toEqual([1_000_000n, 2_000_000n, 3_000_000n]);
  });

  it('sends only what its predicate keeps, and nothing below its floor', () => {
    const { phase, output, asOutput } = livePhase({ predicate: (n) => n.topic === 'mars.od' });
    phase.floor = 3;
    phase.enter(asOutput);
    for (const sent of [notification(2), notification(3, 'mars.an'), notification(4), notification(5)]) phase.deliver(sent);
    expect(output.sent).toEqual([4, 5]);
  });

  it('delivers nothing once stopped, and lets go of what it held back', () => {
    const { phase, output, asOutput } = livePhase();
    phase.deliver(notification(1));
    phase.stop();
    phase.deliver(notification(2));
    expect(phase.enter(asOutput)).toBe(true);
    expect(output.sent).toEqual([]);
  });

  it('ends the stream as a slow consumer when the backlog reaches the stream bound', () => {
    const { phase, owner, output, asOutput } = livePhase({ maxBufferedEvents: 2 });
    for (const sequence of [1, 2, 3]) phase.deliver(notification(sequence));
    expect(owner.slowConsumers).toEqual(['buffered_events']);
    phase.enter(asOutput);
    expect(output.sent).toEqual([1, 2]);
  });

  it('answers false from enter when the output refuses what was held back', () => {
    const { phase, output, asOutput } = livePhase();
    output.refuseFrom = 2;
    for (const sequence of [1, 2, 3]) phase.deliver(notification(sequence));
    expect(phase.enter(asOutput)).toBe(false);
    expect(output.sent).toEqual([1]);
  });

  it('ends the live feed with the error when a delivery throws, and never throws into the publisher', () => {
    const failure = new Error('predicate broke');
    const { phase, owner, asOutput } = livePhase({
      predicate: () => {
        throw failure;
      },
    });
    phase.enter(asOutput);
    expect(() => phase.deliver(notification(1))).not.toThrow();
    expect(owner.ends).toEqual([failure]);
  });

  it('passes the subscription end on to its stream', () => {
    const { phase, owner } = livePhase();
    phase.end();
    const failure = new Error('feed lost');
    phase.end(failure);
    expect(owner.ends).toEqual([undefined, failure]);
  });
});
