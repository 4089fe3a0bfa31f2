/** One SSE frame as the server wrote it: its `event:` and its `data:` parsed as JSON. */
export interface RawFrame {
  readonly event: string;
  readonly json: Record<string, unknown>;
}

/**
 * A watch opened the way any other client opens it, read frame by frame without the library's
 * supervision (no reconnect), so a test sees exactly what the server sent and when it ended.
 */
export class RawStream {
  private readonly frames: RawFrame[] = [];
  private ended = false;
  private wake: (() => void) | undefined;

  private constructor(
    readonly status: number,
    readonly requestId: string,
    private readonly controller: AbortController,
  ) {}

  static async open(url: string, body: unknown, headers: Record<string, string> = {}): Promise<RawStream> {
    const controller = new AbortController();
    const response = await fetch(url, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json', ...headers },
      signal: controller.signal,
    });
    const stream = new RawStream(response.status, response.headers.get('x-request-id') ?? '', controller);
    if (response.status !== 200 || !response.body) {
      await response.text();
      stream.finish();
    } else void stream.pump(response.body.getReader());
    return stream;
  }

  private async pump(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let text = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = text.indexOf('\n\n')) >= 0) {
          this.parse(text.slice(0, end));
          text = text.slice(end + 2);
        }
      }
    } catch {
      // Aborted by `close`, or cut: either way the stream has ended.
    }
    this.finish();
  }

  private parse(block: string): void {
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length === 0) return;
    this.frames.push({ event, json: JSON.parse(data.join('\n')) as Record<string, unknown> });
    this.wake?.();
  }

  private finish(): void {
    this.ended = true;
    this.wake?.();
  }

  /** The next frame other than a heartbeat, or `undefined` once the server ended the stream. */
  async next(timeoutMs = 10_000): Promise<RawFrame | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const frame = this.frames.shift();
      if (frame && frame.event !== 'heartbeat') return frame;
      if (frame) continue;
      if (this.ended) return undefined;
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`no SSE frame within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  close(): void {
    this.controller.abort();
  }
}
