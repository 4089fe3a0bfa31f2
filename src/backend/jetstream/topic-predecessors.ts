import { setTimeout as delay } from 'node:timers/promises';
import { JetStreamApiError, type JetStreamClient, type JetStreamPublishOptions, type PubAck } from '@nats-io/jetstream';

/** JetStream's code for a publish whose expected last subject sequence was not the subject's. */
const WRONG_LAST_SEQUENCE = 10071;
/**
 * Each "wrong last sequence" is another process storing on the same topic in between. Past the
 * first rounds a publish waits a random moment before it tries again, so two processes writing one
 * topic at once take turns instead of one of them losing every race.
 */
const ROUNDS_BEFORE_BACKOFF = 2;
const MAX_BACKOFF_MS = 20;

/** Topics whose last sequence this process remembers, most recently stored last. */
const DEFAULT_CAPACITY = 100_000;

/**
 * The last sequence each topic held, as far as this process saw it, so a publish can tell
 * JetStream which one it expects (`Nats-Expected-Last-Subject-Sequence`). JetStream checks the
 * expectation against the subject and stores the header with the message, so every stored
 * notification names its topic's predecessor exactly, whichever process stored either (D42): a
 * replay that reads a notification whose predecessor it did not read knows that one was lost.
 * A topic this process does not know is expected to be new (0); when it is not, JetStream says
 * which sequence it holds and the publish is sent again with it. Bounded, least recently stored
 * forgotten first (a forgotten topic costs one more round trip, never a wrong header).
 */
export class TopicPredecessors {
  private readonly last = new Map<string, number>();
  /** The publish on each topic that the next one on it waits for (see `publish`). */
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(private readonly capacity = DEFAULT_CAPACITY) {}

  expected(topic: string): number {
    return this.last.get(topic) ?? 0;
  }

  stored(topic: string, sequence: number): void {
    this.last.delete(topic);
    this.last.set(topic, sequence);
    if (this.last.size > this.capacity) {
      const oldest = this.last.keys().next();
      if (!oldest.done) this.last.delete(oldest.value);
    }
  }

  /** After a reconnect or a wipe what this process saw may be stale; JetStream will say so anyway. */
  forgetAll(): void {
    this.last.clear();
  }

  /**
   * Publishes with the topic's expected predecessor, sending again with the one JetStream names
   * while another writer got there first. A duplicate (the same `msgID` stored before) is answered
   * before the expectation is checked, so retries and `Idempotency-Key` replays behave as before.
   * Publishes on one topic from this process go one after the other: each must know the sequence
   * the one before it got, so sending them together would only make all but one fail and resend.
   */
  publish(
    js: JetStreamClient,
    topic: string,
    payload: string,
    options: Partial<JetStreamPublishOptions>,
    deadlineMs: number,
  ): Promise<PubAck> {
    const before = this.tails.get(topic);
    const send = (): Promise<PubAck> => this.publishNow(js, topic, payload, options, deadlineMs);
    const mine = before ? before.then(send, send) : send();
    this.tails.set(topic, mine);
    const forget = (): void => {
      if (this.tails.get(topic) === mine) this.tails.delete(topic);
    };
    mine.then(forget, forget);
    return mine;
  }

  private async publishNow(
    js: JetStreamClient,
    topic: string,
    payload: string,
    options: Partial<JetStreamPublishOptions>,
    deadlineMs: number,
  ): Promise<PubAck> {
    let expected = this.expected(topic);
    for (let round = 1; ; round++) {
      try {
        const ack = await js.publish(topic, payload, { ...options, expect: { ...options.expect, lastSubjectSequence: expected } });
        if (!ack.duplicate) this.stored(topic, ack.seq);
        return ack;
      } catch (error) {
        const actual = heldLastSequence(error);
        if (actual === undefined || Date.now() >= deadlineMs) throw error;
        expected = actual;
        this.stored(topic, actual);
        if (round >= ROUNDS_BEFORE_BACKOFF) await delay(Math.random() * Math.min(MAX_BACKOFF_MS, 2 ** round));
      }
    }
  }
}

/** The sequence the subject holds, from JetStream's "wrong last sequence: N". */
function heldLastSequence(error: unknown): number | undefined {
  if (!(error instanceof JetStreamApiError) || error.code !== WRONG_LAST_SEQUENCE) return undefined;
  const match = /wrong last sequence: (\d+)/.exec(error.message);
  if (!match) return undefined;
  const value = Number(match[1]);
  return Number.isSafeInteger(value) ? value : undefined;
}
