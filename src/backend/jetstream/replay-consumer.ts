import { randomBytes } from 'node:crypto';
import { TimeoutError } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, JetStreamApiCodes, JetStreamApiError, ReplayPolicy, type ConsumerConfig } from '@nats-io/jetstream';
import type { StartCursor } from '../backend.js';
import type { TopicPattern } from '../../topic/topic-pattern.js';
import { formatRfc3339Nanos } from '../../time/time-format.js';
import { encodeToken } from '../../topic/percent-codec.js';
import type { NatsClients } from './nats-link.js';
import { isConsumerMissing, pullNoWait, type PulledMessage } from './pull-no-wait.js';

/** A replay consumer left behind by a crash disappears after this long (docs/design/rules/backends.md §7.12). */
const INACTIVE_THRESHOLD_MS = 30_000;
/**
 * A replay idle for this long (its client reading slowly) may have lost its consumer to the
 * inactive threshold; it checks before pulling, since NATS 2.9 ignores a pull for a missing consumer.
 */
const IDLE_CHECK_AFTER_MS = INACTIVE_THRESHOLD_MS / 2;
/** Tries at creating a replay consumer whose creation went unanswered (see `create`). */
const CONSUMER_CREATE_ATTEMPTS = 4;

/** The consumer's subject filter: a one-token pattern is a bare-base topic, which `<b>.>` would not match (D19). */
export function replayFilterSubject(pattern: TopicPattern): string {
  return pattern.tokens.length === 1 ? encodeToken(pattern.base) : pattern.coarseSubject;
}

/**
 * The one named consumer a replay reads through (`replay-fetch.ts`): created once for the whole
 * replay, pulled with `no_wait`, created again where it stood when the server removed it (its
 * inactive threshold passed while the client read slowly, or an operator deleted it), and deleted
 * when the replay ends.
 */
export class ReplayConsumer {
  private name: string | undefined;
  private lastPullAt = 0;

  /** `position`: one past the last sequence pulled, where a consumer created again starts. */
  constructor(
    private readonly clients: () => NatsClients,
    private readonly streamName: string,
    private readonly filterSubject: string,
    /** How long a pull may go unanswered: the JetStream API timeout (`timeout_seconds`). */
    private readonly pullTimeoutMs: number,
    private position: number,
  ) {}

  /**
   * Creates the consumer, trying again under a new name when the server does not answer.
   * NATS 2.9 places a one-replica consumer on any peer of the stream, offline ones included, so
   * after a cluster node was lost one creation in three can time out; another try lands elsewhere.
   */
  async create(start: StartCursor): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.createOnce(start);
        return;
      } catch (error) {
        if (!(error instanceof TimeoutError) || attempt >= CONSUMER_CREATE_ATTEMPTS) throw error;
      }
    }
  }

  /** Up to `wanted` messages stored now, going on from where the consumer stood if it was removed. */
  async pull(wanted: number): Promise<PulledMessage[]> {
    if (Date.now() - this.lastPullAt >= IDLE_CHECK_AFTER_MS) await this.recreateIfMissing();
    let pulled: PulledMessage[];
    try {
      pulled = await this.pullOnce(wanted);
    } catch (error) {
      if (!isConsumerMissing(error) && !(error instanceof TimeoutError)) throw error;
      if (!(await this.recreateIfMissing())) throw error;
      pulled = await this.pullOnce(wanted);
    }
    const last = pulled[pulled.length - 1];
    if (last) this.position = last.notification.sequence + 1;
    return pulled;
  }

  /** Deletes the consumer without waiting; with no connection, its inactive threshold removes it. */
  delete(): void {
    const name = this.name;
    this.name = undefined;
    if (!name) return;
    try {
      void this.clients()
        .jsm.consumers.delete(this.streamName, name)
        .catch(() => undefined);
    } catch {
      // No connection: the consumer's inactive threshold removes it.
    }
  }

  private async createOnce(start: StartCursor): Promise<void> {
    const filter = this.filterSubject;
    const name = `replay_consumer_${Date.now()}_${randomBytes(16).toString('hex')}`;
    const config: Partial<ConsumerConfig> = {
      name,
      description: `Replay consumer for pattern: ${filter}`,
      filter_subject: filter,
      ack_policy: AckPolicy.None,
      replay_policy: ReplayPolicy.Instant,
      inactive_threshold: INACTIVE_THRESHOLD_MS * 1_000_000,
      mem_storage: true,
      // One replica, on the stream leader: it leads at once. On a replicated stream a consumer would
      // otherwise inherit the stream's replica count and, right after a node was lost, stay without a
      // leader for seconds while its first pull went unanswered (the replay then failed on a timeout).
      num_replicas: 1,
      ...(start.kind === 'date'
        ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: formatRfc3339Nanos(start.atNs) }
        : start.sequence > 0
          ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: start.sequence }
          : { deliver_policy: DeliverPolicy.All }),
    };
    await this.clients().jsm.consumers.add(this.streamName, config);
    this.name = name;
    this.lastPullAt = Date.now();
  }

  /** True when the consumer was gone and a new one now starts where the old one stood. */
  private async recreateIfMissing(): Promise<boolean> {
    try {
      await this.clients().jsm.consumers.info(this.streamName, this.name as string);
      return false;
    } catch (error) {
      if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.ConsumerNotFound)) throw error;
    }
    await this.create({ kind: 'sequence', sequence: this.position });
    return true;
  }

  private pullOnce(limit: number): Promise<PulledMessage[]> {
    this.lastPullAt = Date.now();
    return pullNoWait(this.clients(), this.streamName, this.name as string, limit, this.pullTimeoutMs);
  }
}
