import type { StreamInfo } from '@nats-io/jetstream';
import type { HistoryLoss, ReplayRequest } from '../backend.js';
import { readRfc3339 } from '../../time/instant-text.js';
import type { HistoryLedger, LedgerEntry } from './history-ledger.js';
import type { NatsClients } from './nats-link.js';

/**
 * What a JetStream replay can know of history it will not read (D42, docs/backends.md "History
 * gaps on JetStream"):
 *
 * - Every notification aviso-ts stores carries the sequence its topic's last notification had
 *   when it was stored (`Nats-Expected-Last-Subject-Sequence`, checked by JetStream itself, so it
 *   is exact across processes). A notification whose predecessor lies in the replay's range and
 *   was not read lost that predecessor: per-subject retention superseded it, or it was deleted.
 * - Retention by age, size or message count removes the stream's oldest notifications, whatever
 *   their topics: a range reaching below the stream's first sequence is told so, topics unknown.
 * - Admin deletes and wipes are recorded in the history ledger before they happen.
 */

/** The stream's state a replay reads at its start. */
export interface StreamHead {
  readonly firstSequence: number;
  /** Storage time of the first sequence (ns); absent when the stream holds nothing. */
  readonly firstTimeNs?: bigint;
  /** Limits by age, size or count that drop the oldest notifications (discard `old`). */
  readonly trimsByLimits: boolean;
}

/** The losses known before reading, and a test for what they already say. */
export interface KnownLosses {
  readonly losses: HistoryLoss[];
  /** Whether a lost sequence is already said by one of `losses` (a predecessor need not be said again). */
  said: (sequence: number) => boolean;
}

/** What the stream's head and the history ledger say a replay's range lost, with the stream's info read for it. */
export async function readKnownLosses(
  clients: NatsClients,
  name: string,
  request: ReplayRequest,
  ledger: HistoryLedger,
): Promise<{ known: KnownLosses; info: StreamInfo }> {
  const [info, entry] = await Promise.all([clients.jsm.streams.info(name), ledger.read(name)]);
  const { config, state } = info;
  const trimsByLimits = config.discard !== 'new' && (config.max_age > 0 || (config.max_msgs ?? -1) > 0 || (config.max_bytes ?? -1) > 0);
  const firstTimeNs = state.messages > 0 ? readRfc3339(state.first_ts) : undefined;
  const head = { firstSequence: state.first_seq, trimsByLimits, ...(firstTimeNs === undefined ? {} : { firstTimeNs }) };
  return { known: knownLosses(request, head, entry), info };
}

function knownLosses(request: ReplayRequest, head: StreamHead, ledger: LedgerEntry): KnownLosses {
  const { start, upperBound, pattern } = request;
  const losses: HistoryLoss[] = [];
  const fromSequence = start.kind === 'sequence' ? Math.max(start.sequence, 1) : 1;
  /** Whether something stored at `atNs` (or of unknown time, when absent) lies inside a date start. */
  const storedInRange = (atNs: bigint | undefined): boolean => start.kind !== 'date' || atNs === undefined || atNs >= start.atNs;
  let saidThrough = 0;
  const wholeRange = (through: number, atNs: bigint | undefined): void => {
    const last = Math.min(through, upperBound);
    if (through < 1 || last < fromSequence || !storedInRange(atNs)) return;
    losses.push({ first: fromSequence, last, topicsUnknown: true });
    saidThrough = Math.max(saidThrough, last);
  };
  // The newest of what each removed: a date start is reached when that was stored at or after it.
  if (head.trimsByLimits && head.firstSequence > 1) wholeRange(head.firstSequence - 1, head.firstTimeNs);
  wholeRange(ledger.wipedThrough, BigInt(ledger.wipedAtMs) * 1_000_000n);
  wholeRange(ledger.forgottenThrough, BigInt(ledger.forgottenAtMs) * 1_000_000n);
  const deleted = new Set<number>();
  for (const [sequence, topic, storedAtMs, predecessor] of ledger.deleted) {
    if (sequence < fromSequence || sequence > upperBound || sequence <= saidThrough) continue;
    if (!storedInRange(BigInt(storedAtMs) * 1_000_000n) || !pattern.matches(topic)) continue;
    // Its predecessor in the range may have gone with it (superseded by it): how many is not known then.
    const mayHideOthers = predecessor >= fromSequence && predecessor > saidThrough;
    losses.push(mayHideOthers ? { first: fromSequence, last: sequence } : { first: sequence, last: sequence, count: 1 });
    deleted.add(sequence);
  }
  return { losses, said: (sequence) => sequence <= saidThrough || deleted.has(sequence) };
}

/**
 * Follows the predecessors of the notifications a replay reads, in sequence order: a predecessor
 * at or above `from` that was not read (and is not said already) was lost. Read sequences are kept
 * in one ascending array, eight bytes each.
 */
export class PredecessorLosses {
  private readonly read: number[] = [];

  constructor(
    /** The lowest sequence of the replay's range. */
    private from: number,
    private readonly said: (sequence: number) => boolean,
  ) {}

  /** A date start learns its range's lowest sequence once it found the first notification in it. */
  startAt(from: number): void {
    this.from = from;
  }

  /** One notification of the replay's topics was read; the loss its predecessor reveals. */
  observe(sequence: number, predecessor: number | undefined): HistoryLoss | undefined {
    let loss: HistoryLoss | undefined;
    if (
      predecessor !== undefined &&
      predecessor >= this.from &&
      predecessor < sequence &&
      !this.said(predecessor) &&
      !this.wasRead(predecessor)
    ) {
      loss = { first: this.from, last: predecessor };
    }
    this.read.push(sequence);
    return loss;
  }

  private wasRead(sequence: number): boolean {
    let lo = 0;
    let hi = this.read.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.read[mid] as number) < sequence) lo = mid + 1;
      else hi = mid;
    }
    return this.read[lo] === sequence;
  }
}
