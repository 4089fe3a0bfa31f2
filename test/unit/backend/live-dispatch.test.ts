import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LiveSink, StoredNotification } from '../../../src/backend/backend.js';
import { LiveDispatch } from '../../../src/backend/live-dispatch.js';
import { TopicDecodeError, decodeTopic } from '../../../src/topic/percent-codec.js';
import { TopicPattern } from '../../../src/topic/topic-pattern.js';

const notification = (sequence: number, topic: string): StoredNotification => ({ sequence, topic, payload: 'null', timestampNs: 0n });

/** What both registries offer the backends: register a sink, dispatch a notification. */
interface Registry {
  register(pattern: TopicPattern, sink: LiveSink): () => boolean;
  dispatch(notification: StoredNotification): void;
  readonly size: number;
}

/**
 * The dispatch both backends had before the index, kept as the reference: every registration in
 * a Set, visited in order, its pattern tested against the decoded topic.
 */
class LinearScan implements Registry {
  private readonly registrations = new Set<{ pattern: TopicPattern; sink: LiveSink }>();

  get size(): number {
    return this.registrations.size;
  }

  register(pattern: TopicPattern, sink: LiveSink): () => boolean {
    const registration = { pattern, sink };
    this.registrations.add(registration);
    return () => this.registrations.delete(registration);
  }

  dispatch(stored: StoredNotification): void {
    let tokens: string[];
    try {
      tokens = decodeTopic(stored.topic);
    } catch (error) {
      if (error instanceof TopicDecodeError) return;
      throw error;
    }
    for (const { pattern, sink } of this.registrations) {
      if (pattern.matchesTokens(tokens)) sink.deliver(stored);
    }
  }
}

type Operation =
  | { readonly kind: 'add'; readonly tokens: readonly string[]; readonly removesOnDelivery: number | undefined }
  | { readonly kind: 'remove'; readonly pick: number }
  | { readonly kind: 'notify'; readonly wire: string };

// Small alphabets so that equal tokens, wildcards, escapes and bare bases are common.
const patternToken = fc.oneof(
  { weight: 3, arbitrary: fc.constant('*') },
  { weight: 5, arbitrary: fc.constantFrom('a', 'A', 'a.b', '%', '', 'é', '\u0000') },
);
const base = fc.constantFrom('mars', 'diss');
const patternTokens = fc.tuple(base, fc.array(patternToken, { maxLength: 3 })).map(([b, rest]) => [b, ...rest]);
/** Wire tokens: canonical encodings of the pattern values, non-canonical escapes of them, broken escapes. */
const wireToken = fc.constantFrom(
  'a',
  'a',
  'A',
  '%41',
  'a%2Eb',
  'a%2eb',
  '%25',
  '',
  '',
  '%C3%A9',
  'é',
  '%2A',
  'b',
  '%ZZ',
  '%',
  '%00',
  'a%00',
);
const wireTopic = fc.tuple(base, fc.array(wireToken, { maxLength: 3 })).map(([b, rest]) => [b, ...rest].join('.'));

const operation: fc.Arbitrary<Operation> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('add' as const),
      tokens: patternTokens,
      // Some sinks close another watcher (picked among those registered) when they receive a notification.
      removesOnDelivery: fc.option(fc.nat(), { nil: undefined, freq: 4 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('notify' as const), wire: wireTopic }) },
);

/** Runs the operations on a registry and returns every delivery as `watcher:sequence`, in order. */
function run(registry: Registry, operations: readonly Operation[]): string[] {
  const deliveries: string[] = [];
  const removers: (() => boolean)[] = [];
  let sequence = 0;
  for (const op of operations) {
    if (op.kind === 'add') {
      const id = removers.length;
      const removes = op.removesOnDelivery;
      removers.push(
        registry.register(new TopicPattern(op.tokens), {
          deliver: (n) => {
            deliveries.push(`${id}:${n.sequence}`);
            if (removes !== undefined && removers.length > 0) removers[removes % removers.length]?.();
          },
          end: () => undefined,
        }),
      );
    } else if (op.kind === 'remove') {
      if (removers.length > 0) removers[op.pick % removers.length]?.();
    } else {
      registry.dispatch(notification(++sequence, op.wire));
    }
    deliveries.push(`size ${registry.size}`);
  }
  return deliveries;
}

describe('LiveDispatch', () => {
  it('delivers exactly what the linear scan delivered, in the same order', () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 60 }), (operations) => {
        expect(run(new LiveDispatch(), operations)).toEqual(run(new LinearScan(), operations));
      }),
      { numRuns: 3000 },
    );
  });

  it('delivers to one watcher in the order notifications are dispatched', () => {
    const dispatch = new LiveDispatch();
    const received: number[] = [];
    dispatch.register(new TopicPattern(['mars', '*']), { deliver: (n) => received.push(n.sequence), end: () => undefined });
    for (let sequence = 1; sequence <= 50; sequence++) dispatch.dispatch(notification(sequence, `mars.${sequence % 3}`));
    expect(received).toEqual(Array.from({ length: 50 }, (_, k) => k + 1));
  });

  it('never delivers to a watcher removed while the same notification is being dispatched', () => {
    const dispatch = new LiveDispatch();
    const received: string[] = [];
    let removeSecond: () => boolean = () => false;
    dispatch.register(new TopicPattern(['mars', '*']), {
      deliver: (n) => {
        received.push(`first:${n.sequence}`);
        removeSecond();
      },
      end: () => undefined,
    });
    removeSecond = dispatch.register(new TopicPattern(['mars', 'a']), {
      deliver: (n) => received.push(`second:${n.sequence}`),
      end: () => undefined,
    });
    dispatch.dispatch(notification(1, 'mars.a'));
    dispatch.dispatch(notification(2, 'mars.a'));
    expect(received).toEqual(['first:1', 'first:2']);
  });

  it('gives a watcher added during a dispatch only the notifications after it (its H counts the current one)', () => {
    const dispatch = new LiveDispatch();
    const received: string[] = [];
    let added = false;
    dispatch.register(new TopicPattern(['mars', '*']), {
      deliver: (n) => {
        received.push(`first:${n.sequence}`);
        if (added) return;
        added = true;
        dispatch.register(new TopicPattern(['mars', 'a']), { deliver: (m) => received.push(`late:${m.sequence}`), end: () => undefined });
      },
      end: () => undefined,
    });
    dispatch.dispatch(notification(1, 'mars.a'));
    dispatch.dispatch(notification(2, 'mars.a'));
    expect(received).toEqual(['first:1', 'first:2', 'late:2']);
  });

  it('ignores a topic that does not decode (docs/design/rules/schema-and-validation.md §7.3)', () => {
    const dispatch = new LiveDispatch();
    const received: number[] = [];
    dispatch.register(new TopicPattern(['mars', '*']), { deliver: (n) => received.push(n.sequence), end: () => undefined });
    dispatch.dispatch(notification(1, 'mars.%ZZ'));
    dispatch.dispatch(notification(2, 'mars.%41'));
    expect(received).toEqual([2]);
  });

  it('removeAll empties the registry and returns every sink in registration order', () => {
    const dispatch = new LiveDispatch();
    const sinks: LiveSink[] = ['mars', 'diss'].map(() => ({ deliver: () => undefined, end: () => undefined }));
    const removers = sinks.map((sink, k) => dispatch.register(new TopicPattern([k === 0 ? 'mars' : 'diss']), sink));
    expect(dispatch.removeAll()).toEqual(sinks);
    expect(dispatch.size).toBe(0);
    expect(removers.map((remove) => remove())).toEqual([false, false]);
  });
});
