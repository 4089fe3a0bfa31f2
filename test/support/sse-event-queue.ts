import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';

export interface SseEvent {
  readonly event: string;
  readonly data: string;
  /** `data` parsed as JSON. */
  readonly json: Record<string, unknown>;
  /** The frame's `id:` line, when it has one (GET streams' notifications, docs/design/rules/browser.md §1). */
  readonly id?: string;
}

export interface SseEventQueueOptions {
  /**
   * How an event's `data` becomes its `json`: `JSON.parse` unless given, so data that is not JSON
   * throws out of `feed` (and, through the caller's read loop, fails the stream).
   */
  readonly json?: (data: string) => Record<string, unknown>;
}

/**
 * The events of one SSE response as a test reads them: `next` waits for the following one (or
 * the end), whatever transport feeds the queue text (fetch, Node's `http2` or `https`); the text
 * is parsed with eventsource-parser.
 */
export class SseEventQueue {
  private readonly events: SseEvent[] = [];
  private readonly waiters: (() => void)[] = [];
  private readonly parser: EventSourceParser;
  private ended = false;
  private failure: Error | undefined;
  /** Raw text as received, for byte-level checks. */
  raw = '';

  constructor({ json = (data) => JSON.parse(data) as Record<string, unknown> }: SseEventQueueOptions = {}) {
    this.parser = createParser({
      onEvent: (message: EventSourceMessage) => {
        this.push({
          event: message.event ?? 'message',
          data: message.data,
          json: json(message.data),
          ...(message.id === undefined ? {} : { id: message.id }),
        });
      },
    });
  }

  /** Text as it arrives: kept in `raw`, and every complete event in it queued. */
  protected feed(text: string): void {
    this.raw += text;
    this.parser.feed(text);
  }

  private push(event: SseEvent): void {
    this.events.push(event);
    this.wake();
  }

  /**
   * No more events. `failure`, when given, is thrown by `next` from now on, even while events
   * are still queued: a failed stream hands out nothing more.
   */
  protected finish(failure?: Error): void {
    this.ended = true;
    if (failure) this.failure = failure;
    this.wake();
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  /** The next event, or `undefined` once the server ended the stream. */
  async next(timeoutMs = 10_000): Promise<SseEvent | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (this.events.length === 0 && !this.ended) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`no SSE event within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    if (this.failure) throw this.failure;
    return this.events.shift();
  }

  /** The next event that is not a heartbeat. */
  async nextSignificant(timeoutMs = 10_000): Promise<SseEvent | undefined> {
    for (;;) {
      const event = await this.next(timeoutMs);
      if (event?.event !== 'heartbeat') return event;
    }
  }

  /** Every remaining event until the server ends the stream. */
  async rest(timeoutMs = 15_000): Promise<SseEvent[]> {
    const out: SseEvent[] = [];
    for (;;) {
      const event = await this.next(timeoutMs);
      if (!event) return out;
      out.push(event);
    }
  }

  get hasEnded(): boolean {
    return this.ended && this.events.length === 0;
  }
}
