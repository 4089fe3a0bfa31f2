import type { Logger } from 'pino';
import type { DeleteOutcome, WipeOutcome } from '../backend.js';
import { MAX_STREAM_NAME_BYTES, streamNameBytes, streamNameOf } from '../../topic/stream-name.js';
import type { HistoryLedger } from './history-ledger.js';
import { TOPIC_PREDECESSOR_HEADER } from './message-mapping.js';
import { errorText, isMessageNotFound, isStreamNotFound } from './nats-errors.js';
import type { NatsLink } from './nats-link.js';
import type { StreamCatalog } from './stream-catalog.js';
import type { TopicPredecessors } from './topic-predecessors.js';

/**
 * The admin operations on JetStream streams: delete one notification, wipe one stream or all the
 * configured ones (D22, D30). Each is recorded in the history ledger before it is carried out, so a
 * replay over what it removed says so (D42): a record of an operation that then fails only makes a
 * replay name a loss that did not happen, never miss one.
 */
export class StreamAdmin {
  constructor(
    private readonly link: NatsLink,
    private readonly catalog: StreamCatalog,
    private readonly ledger: HistoryLedger,
    private readonly predecessors: TopicPredecessors,
    private readonly logger: Logger,
  ) {}

  /**
   * The deletion is recorded in the history ledger first (D42): a record of a delete that then
   * fails only makes a replay name a loss that did not happen.
   */
  async deleteMessage(streamKey: string, sequence: number): Promise<DeleteOutcome> {
    // The request subject would carry the name: one no stream can have is not sent (D33).
    if (!canNameStream(streamKey) || !Number.isSafeInteger(sequence) || sequence < 1) return 'not_found';
    const name = streamNameOf(streamKey);
    const { jsm } = this.link.clients();
    try {
      const message = await jsm.streams.getMessage(name, { seq: sequence });
      if (!message) return 'not_found';
      const predecessor = Number(message.header?.get(TOPIC_PREDECESSOR_HEADER) ?? 0);
      await this.ledger.recordDeletion(
        name,
        sequence,
        message.subject,
        message.time.getTime(),
        Number.isSafeInteger(predecessor) ? predecessor : 0,
      );
      return (await jsm.streams.deleteMessage(name, sequence, false)) ? 'deleted' : 'not_found';
    } catch (error) {
      if (isStreamNotFound(error) || isMessageNotFound(error)) return 'not_found';
      throw error;
    }
  }

  /**
   * Purges a stream, recorded in the history ledger before and after (D42): before with what it
   * held then, after with where the purge really reached (what was stored in between is in it).
   */
  private async purge(name: string): Promise<void> {
    const { jsm } = this.link.clients();
    const before = await jsm.streams.info(name);
    await this.ledger.recordWipe(name, before.state.last_seq, Date.now());
    await jsm.streams.purge(name);
    this.predecessors.forgetAll();
    try {
      const after = await jsm.streams.info(name);
      await this.ledger.recordWipe(name, after.state.first_seq - 1, Date.now());
    } catch (error) {
      this.logger.warn(
        { event_name: 'backend.jetstream.history_ledger.wipe.failed', stream: name, error: errorText(error) },
        `Stream ${name} was purged; the history ledger records it up to sequence ${before.state.last_seq} only`,
      );
    }
  }

  /**
   * Any case or (resolved by the route) an event-type alias names the stream (D22). A name no
   * stream could have is not sent: `$JS.API.STREAM.PURGE.<name>` over nats-server's 4 KiB control
   * line would make it close the whole connection (D33).
   */
  async wipeStream(name: string): Promise<WipeOutcome> {
    if (!canNameStream(name)) return 'not_found';
    try {
      await this.purge(streamNameOf(name));
      return 'wiped';
    } catch (error) {
      if (isStreamNotFound(error)) return 'not_found';
      throw error;
    }
  }

  /** Purges the streams of configured bases only (D22); one failure does not stop the others. */
  async wipeAll(): Promise<void> {
    const { jsm } = this.link.clients();
    const owned = this.catalog.configuredStreamNames();
    const existing: string[] = [];
    for await (const name of jsm.streams.names()) existing.push(name);
    for (const name of existing.filter((n) => owned.has(n))) {
      try {
        await this.purge(name);
      } catch (error) {
        this.logger.error({ event_name: 'backend.jetstream.purge.failed', stream: name, error: errorText(error) }, 'Purge failed');
      }
    }
  }
}

/**
 * Whether a JetStream stream could have this name: nats-server refuses names over 255 bytes and
 * names with path separators (everything else it refuses is percent-encoded by `streamNameOf`).
 */
function canNameStream(base: string): boolean {
  return streamNameBytes(base) <= MAX_STREAM_NAME_BYTES && !/[/\\]/.test(base);
}
