import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface SseEvent {
  readonly event: string;
  readonly data: string;
  /** `data` parsed as JSON. */
  readonly json: Record<string, unknown>;
  /** The frame's `id:` line, when it has one (GET streams' notifications, browser.md §1). */
  readonly id?: string;
}

/**
 * Reads an aviso stream the way a client does: POST, check the response, parse SSE with
 * eventsource-parser. Events are queued as they arrive; `next` waits for the following one.
 */
export class SseClient {
  private readonly events: SseEvent[] = [];
  private readonly waiters: (() => void)[] = [];
  private ended = false;
  private failure: Error | undefined;
  /** Raw bytes as received, for byte-level checks. */
  raw = '';

  private constructor(
    readonly status: number,
    readonly headers: Headers,
    private readonly controller: AbortController,
    readonly errorBody: string | undefined,
  ) {}

  static async open(url: string, body: unknown, init: { headers?: Record<string, string> } = {}): Promise<SseClient> {
    return SseClient.request(url, {
      method: 'POST',
      body: typeof body === 'string' ? body : JSON.stringify(body),
      headers: init.headers,
    });
  }

  /** A GET stream (browser.md §1): `url` carries the query; `headers` e.g. `Last-Event-ID`. */
  static async openGet(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    return SseClient.request(url, { method: 'GET', headers });
  }

  private static async request(url: string, init: RequestInit): Promise<SseClient> {
    const controller = new AbortController();
    const response = await fetch(url, { ...init, signal: controller.signal });
    if (response.status !== 200 || !response.body) {
      const failed = new SseClient(response.status, response.headers, controller, await response.text());
      failed.ended = true;
      return failed;
    }
    const client = new SseClient(response.status, response.headers, controller, undefined);
    void client.pump(response.body);
    return client;
  }

  private async pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const parser = createParser({
      onEvent: (message: EventSourceMessage) => {
        this.events.push({
          event: message.event ?? 'message',
          data: message.data,
          json: JSON.parse(message.data),
          ...(message.id === undefined ? {} : { id: message.id }),
        });
        this.wake();
      },
    });
    const decoder = new TextDecoder();
    try {
      for await (const chunk of body) {
        const text = decoder.decode(chunk, { stream: true });
        this.raw += text;
        parser.feed(text);
      }
    } catch (error) {
      if (!this.controller.signal.aborted) this.failure = error as Error;
    } finally {
      this.ended = true;
      this.wake();
    }
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

  close(): void {
    this.controller.abort();
  }
}

/** Events without heartbeats, which may appear anywhere after the opening frame (streaming.md §8.2). */
export function withoutHeartbeats(events: readonly SseEvent[]): SseEvent[] {
  return events.filter((e) => e.event !== 'heartbeat');
}
