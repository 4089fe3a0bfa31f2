import { createParser, type EventSourceMessage } from 'eventsource-parser';

/**
 * A watch that follows the cursor rules of ECMWF's aviso client (the Rust `aviso` crate's
 * supervisor, as docs/design/decisions.md D40 and D41 describe it), written out here so that the
 * server is tested against them without that client:
 *
 * - it POSTs `/api/v1/watch` with `from_id` = last delivered + 1 on every reconnect (never a
 *   `Last-Event-ID`), and the first `from_id` it was given before anything was delivered;
 * - when it sends a `from_id`, the first frame it reads must be `replay_started` (heartbeats and
 *   events it does not know are skipped before it), else `connection_established`;
 * - after the opening it ignores `replay-control` types it does not know (`history_gap` and
 *   `sequence_reset` among them) and `replay_completed`;
 * - its `GapGuard` expects `from_id` first, then each sequence + 1: a sequence above the expected
 *   one ends the watch with a history gap (`SequenceJump`) when the request is unfiltered (empty
 *   identifier); one at or below it is a duplicate or an anomaly, delivered again, and the
 *   position never moves back;
 * - it reconnects on `end_of_stream`, `server_shutdown` (after 5 s) and `max_duration_reached`,
 *   on a lost connection and on a 5xx (after `Retry-After`); any other close reason, an `error`
 *   event or a 4xx ends it.
 */
export class HistoryGap extends Error {
  constructor(
    readonly expected: number,
    readonly observed: number,
  ) {
    super(`HistoryGap { SequenceJump { expected: ${expected}, observed: ${observed} } }`);
    this.name = 'HistoryGap';
  }
}

const CLOSE_REASONS = new Set(['end_of_stream', 'max_duration_reached', 'server_shutdown']);
const SERVER_SHUTDOWN_WAIT_MS = 5_000;
const RETRY_WAIT_MS = 250;

type Step = { readonly kind: 'reconnect'; readonly waitMs: number } | { readonly kind: 'ended' };

export class AvisoClientRulesWatch {
  /** Every sequence delivered to the consumer, repeats included, in order. */
  readonly delivered: number[] = [];
  /** The `from_id` of each request sent (`undefined`: none). */
  readonly requestedFrom: (string | undefined)[] = [];
  /** What ended the watch, when something did. */
  failure: Error | undefined;
  private lastDelivered: number | undefined;
  private readonly abort = new AbortController();
  private readonly running: Promise<void>;

  /** `fromId`: the first sequence wanted (the wire `from_id`), or none for live only. */
  constructor(
    private readonly baseUrl: string,
    private readonly request: { readonly eventType: string; readonly identifier: Record<string, unknown>; readonly fromId?: number },
  ) {
    this.running = this.run();
  }

  /** Resolves once `count` notifications were delivered; rejects when the watch ended first or after `timeoutMs`. */
  async waitForDelivered(count: number, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.delivered.length < count) {
      if (this.failure) throw this.failure;
      if (Date.now() > deadline) throw new Error(`only ${this.delivered.length} of ${count} delivered: ${this.delivered.join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
  }

  private get unfiltered(): boolean {
    return Object.keys(this.request.identifier).length === 0;
  }

  private async run(): Promise<void> {
    while (!this.abort.signal.aborted) {
      let step: Step;
      try {
        step = await this.connect();
      } catch (error) {
        if (this.abort.signal.aborted) return;
        if (error instanceof HistoryGap || error instanceof FatalError) {
          this.failure = error;
          return;
        }
        step = { kind: 'reconnect', waitMs: RETRY_WAIT_MS };
      }
      if (step.kind === 'ended') return;
      await new Promise((resolve) => setTimeout(resolve, step.waitMs));
    }
  }

  private async connect(): Promise<Step> {
    const fromId = this.lastDelivered !== undefined ? this.lastDelivered + 1 : this.request.fromId;
    const body: Record<string, unknown> = { event_type: this.request.eventType, identifier: this.request.identifier };
    if (fromId !== undefined) body.from_id = String(fromId);
    this.requestedFrom.push(fromId === undefined ? undefined : String(fromId));
    const response = await fetch(new URL('api/v1/watch', this.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(body),
      signal: this.abort.signal,
    });
    if (response.status >= 500 || response.status === 429) {
      await response.body?.cancel();
      const retryAfter = Number(response.headers.get('retry-after'));
      return { kind: 'reconnect', waitMs: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : RETRY_WAIT_MS };
    }
    if (response.status !== 200 || !response.body) throw new FatalError(`HTTP ${response.status}: ${await response.text()}`);

    const frames: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (message) => frames.push(message) });
    const decoder = new TextDecoder();
    const connection = new ConnectionRules(fromId, this.unfiltered);
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      for (const frame of frames.splice(0)) {
        const outcome = connection.read(frame);
        if (outcome.kind === 'deliver') this.deliver(outcome.sequence);
        else if (outcome.kind === 'close') return outcome.step;
      }
    }
    return { kind: 'reconnect', waitMs: RETRY_WAIT_MS };
  }

  private deliver(sequence: number): void {
    this.delivered.push(sequence);
    // The saved position only ever moves forward.
    this.lastDelivered = Math.max(this.lastDelivered ?? sequence, sequence);
  }
}

class FatalError extends Error {}

type FrameOutcome =
  { readonly kind: 'none' } | { readonly kind: 'deliver'; readonly sequence: number } | { readonly kind: 'close'; readonly step: Step };
const NONE: FrameOutcome = { kind: 'none' };

/** One connection: its opening rule and its `GapGuard`. */
class ConnectionRules {
  private opened = false;
  /** The GapGuard: the next sequence expected, from the `from_id` sent. */
  private expected: number | undefined;

  constructor(
    private readonly fromId: number | undefined,
    private readonly strict: boolean,
  ) {
    this.expected = fromId;
  }

  read(frame: EventSourceMessage): FrameOutcome {
    const event = frame.event ?? 'message';
    if (event === 'heartbeat') return NONE;
    if (event === 'error') throw new FatalError(`error event: ${frame.data}`);
    if (!this.opened) return this.readOpening(event, frame.data);
    if (event === 'connection-closing') return { kind: 'close', step: closeStep(JSON.parse(frame.data) as Record<string, unknown>) };
    if (event === 'replay-control') {
      const data = JSON.parse(frame.data) as Record<string, unknown>;
      if (data.type === 'notification_replay_limit_reached') throw new FatalError('replay limit reached');
      return NONE;
    }
    if (event !== 'live-notification' && event !== 'replay') return NONE;
    const data = JSON.parse(frame.data) as Record<string, unknown>;
    if (data.type === 'connection_established') return NONE;
    const match = /@(\d+)$/.exec(String(data.id));
    if (!match) throw new FatalError(`malformed id ${String(data.id)}`);
    const sequence = Number(match[1]);
    this.observe(sequence);
    return { kind: 'deliver', sequence };
  }

  private readOpening(event: string, text: string): FrameOutcome {
    if (event === 'connection-closing') throw new FatalError('closed before the opening');
    if (event !== 'live-notification' && event !== 'replay' && event !== 'replay-control') return NONE;
    const data = JSON.parse(text) as Record<string, unknown>;
    const [expectedEvent, expectedType] =
      this.fromId !== undefined ? ['replay-control', 'replay_started'] : ['live-notification', 'connection_established'];
    if (event !== expectedEvent || data.type !== expectedType)
      throw new FatalError(`expected ${expectedType} first, got ${event} ${String(data.type)}`);
    this.opened = true;
    return NONE;
  }

  private observe(sequence: number): void {
    const expected = this.expected;
    if (expected !== undefined && sequence > expected && this.strict) throw new HistoryGap(expected, sequence);
    // Below the expected one: a duplicate or a server-side anomaly, delivered, expected unchanged.
    if (expected === undefined || sequence >= expected) this.expected = sequence + 1;
  }
}

function closeStep(data: Record<string, unknown>): Step {
  const reason = String(data.reason);
  if (!CLOSE_REASONS.has(reason)) throw new FatalError(`unknown close reason ${reason}`);
  return { kind: 'reconnect', waitMs: reason === 'server_shutdown' ? SERVER_SHUTDOWN_WAIT_MS : 0 };
}
