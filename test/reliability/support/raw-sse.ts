import { Agent, request, type ClientRequest, type IncomingMessage } from 'node:http';
import { createParser } from 'eventsource-parser';

/**
 * A lean SSE reader for suites that hold hundreds of streams or misbehave on purpose: one
 * node:http request on its own socket (no keep-alive pool), frames parsed with eventsource-parser
 * and kept as strings, and direct control of the socket: `pause` stops reading so the server sees
 * TCP backpressure once the kernel buffers fill, `destroy` drops the connection wherever the
 * stream is (mid-frame included).
 */

export interface RawFrame {
  readonly event: string;
  readonly data: string;
}

export interface RawStreamOptions {
  /** Keep every frame (default) or only count them: a fleet of idle streams needs no history. */
  readonly keepFrames?: boolean;
  /** Called with every chunk as received, before parsing (for mid-frame disconnects). */
  readonly onChunk?: (stream: RawSseStream, chunk: string) => void;
  /** Called with every parsed frame, kept or not: lets a fleet check each frame as it comes. */
  readonly onFrame?: (frame: RawFrame) => void;
}

const ONE_SOCKET_PER_STREAM = new Agent({ keepAlive: false, maxSockets: Infinity });

export class RawSseStream {
  status = 0;
  readonly frames: RawFrame[] = [];
  frameCount = 0;
  /** Bytes of body received. */
  bytes = 0;
  /** `reason` of the `connection-closing` frame, once seen. */
  closeReason: string | undefined;
  closeFrame: Record<string, unknown> | undefined;
  /** `X-Request-ID` of the response. */
  requestId: string | undefined;
  /** The client's port of the connection, once connected (to find it in /proc/net/tcp). */
  localPort: number | undefined;
  /** Set when the transport failed (reset, refused), as opposed to an orderly end. */
  transportError: Error | undefined;
  private ended = false;
  private readonly request: ClientRequest;
  private response: IncomingMessage | undefined;
  private readonly firstFrame: Promise<void>;
  private readonly end: Promise<void>;

  constructor(origin: string, path: string, body: string, options: RawStreamOptions = {}) {
    const url = new URL(origin);
    let resolveFirst!: () => void;
    let rejectFirst!: (error: Error) => void;
    let resolveEnd!: () => void;
    this.firstFrame = new Promise((resolve, reject) => {
      resolveFirst = resolve;
      rejectFirst = reject;
    });
    // Callers that never wait for the opening frame must not see an unhandled rejection.
    this.firstFrame.catch(() => undefined);
    this.end = new Promise((resolve) => (resolveEnd = resolve));
    const finish = (error?: Error): void => {
      if (this.ended) return;
      this.ended = true;
      if (error) this.transportError = error;
      rejectFirst(error ?? new Error(`stream ended before its first frame (status ${this.status})`));
      resolveEnd();
    };
    const keepFrames = options.keepFrames ?? true;
    const parser = createParser({
      onEvent: (message) => {
        const frame = { event: message.event ?? 'message', data: message.data };
        this.frameCount++;
        if (keepFrames) this.frames.push(frame);
        options.onFrame?.(frame);
        if (frame.event === 'connection-closing') {
          this.closeFrame = JSON.parse(frame.data) as Record<string, unknown>;
          this.closeReason = String(this.closeFrame.reason);
        }
        if (this.frameCount === 1) resolveFirst();
      },
    });
    this.request = request(
      {
        agent: ONE_SOCKET_PER_STREAM,
        host: url.hostname,
        port: url.port,
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        this.response = response;
        this.status = response.statusCode ?? 0;
        const requestId = response.headers['x-request-id'];
        this.requestId = typeof requestId === 'string' ? requestId : undefined;
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          this.bytes += Buffer.byteLength(chunk);
          options.onChunk?.(this, chunk);
          if (!this.ended) parser.feed(chunk);
        });
        response.on('end', () => finish());
        response.on('error', (error) => finish(error));
        response.on('close', () => finish());
      },
    );
    this.request.on('socket', (socket) => socket.once('connect', () => (this.localPort = socket.localPort)));
    this.request.on('error', (error) => finish(error));
    this.request.end(body);
  }

  /** Resolves at the first frame (the opening control); rejects if the stream ended or failed first. */
  opened(): Promise<void> {
    return this.firstFrame;
  }

  /** Resolves when the response is over, however it ended. */
  closed(): Promise<void> {
    return this.end;
  }

  get hasEnded(): boolean {
    return this.ended;
  }

  /** Stops reading: the socket's data stays in the kernel until `resume`. */
  pause(): void {
    this.response?.pause();
  }

  resume(): void {
    this.response?.resume();
  }

  /** Drops the connection at once (the client vanishes). */
  destroy(): void {
    this.ended = true;
    this.request.destroy();
  }

  /** Frames other than heartbeats. */
  significant(): RawFrame[] {
    return this.frames.filter((frame) => frame.event !== 'heartbeat');
  }
}

/** Opens `count` streams, at most `concurrency` at a time, each waited for until its opening frame. */
export async function openStreams(count: number, open: (index: number) => RawSseStream, concurrency = 50): Promise<RawSseStream[]> {
  const streams: RawSseStream[] = [];
  let next = 0;
  const slot = async (): Promise<void> => {
    while (next < count) {
      const stream = open(next++);
      streams.push(stream);
      await stream.opened();
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, slot));
  return streams;
}

/** The sequence of a notification frame's CloudEvent id (`<event_type>@<sequence>`). */
export function sequenceOf(frame: RawFrame): number {
  const match = /"id":"[^"@]*@(\d+)"/.exec(frame.data);
  if (!match) throw new Error(`no CloudEvent id in ${frame.data.slice(0, 200)}`);
  return Number(match[1]);
}

// Re-exported for the suites that import it from here; it lives with the other test helpers.
export { metricSum } from '../../support/metric-sum.js';

/** Resident set size of a process in bytes (`VmRSS` of /proc/<pid>/status). */
export async function rssBytes(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (!match) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}
