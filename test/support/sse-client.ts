import { SseEventQueue, type SseEvent } from './sse-event-queue.js';

export type { SseEvent } from './sse-event-queue.js';

/**
 * Reads an aviso stream the way a client does: POST, check the response, parse SSE with
 * eventsource-parser. Events are queued as they arrive; `next` waits for the following one.
 */
export class SseClient extends SseEventQueue {
  private constructor(
    readonly status: number,
    readonly headers: Headers,
    private readonly controller: AbortController,
    readonly errorBody: string | undefined,
  ) {
    super();
  }

  static async open(url: string, body: unknown, init: { headers?: Record<string, string> } = {}): Promise<SseClient> {
    return SseClient.request(url, {
      method: 'POST',
      body: typeof body === 'string' ? body : JSON.stringify(body),
      headers: init.headers,
    });
  }

  /** A GET stream (docs/design/rules/browser.md §1): `url` carries the query; `headers` e.g. `Last-Event-ID`. */
  static async openGet(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    return SseClient.request(url, { method: 'GET', headers });
  }

  private static async request(url: string, init: RequestInit): Promise<SseClient> {
    const controller = new AbortController();
    const response = await fetch(url, { ...init, signal: controller.signal });
    if (response.status !== 200 || !response.body) {
      const failed = new SseClient(response.status, response.headers, controller, await response.text());
      failed.finish();
      return failed;
    }
    const client = new SseClient(response.status, response.headers, controller, undefined);
    void client.pump(response.body);
    return client;
  }

  private async pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    try {
      // Data that is not JSON throws out of `feed` (the default JSON rule) and fails the stream.
      for await (const chunk of body) this.feed(decoder.decode(chunk, { stream: true }));
    } catch (error) {
      this.finish(this.controller.signal.aborted ? undefined : (error as Error));
      return;
    }
    this.finish();
  }

  close(): void {
    this.controller.abort();
  }
}

/** Events without heartbeats, which may appear anywhere after the opening frame (docs/design/rules/streaming.md §8.2). */
export function withoutHeartbeats(events: readonly SseEvent[]): SseEvent[] {
  return events.filter((e) => e.event !== 'heartbeat');
}
