import { request as httpRequest, Agent as HttpAgent, type IncomingMessage } from 'node:http';
import { connect as connectHttp2, constants as http2Constants, type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import { createParser } from 'eventsource-parser';
import { sequenceOf, type RawFrame } from './raw-sse.js';

/**
 * One SSE stream over any transport the server speaks (plain HTTP/1.1, HTTP/1.1 over TLS, HTTP/2),
 * POST or GET, on a connection of its own, with the reading under the test's control: `pause`
 * stops reading (TCP backpressure over HTTP/1.1, a shut flow-control window over HTTP/2) and
 * `resume` reads again as fast as it can. It records how the stream ended, told apart as a client
 * sees it: the close frame and then the end of the response, an end without a close frame, or a
 * reset (a connection reset, or RST_STREAM over HTTP/2).
 */

export type Transport = 'http/1.1' | 'https/1.1' | 'h2';

export interface StreamTarget {
  /** `http://…` for `http/1.1`, `https://…` otherwise. */
  readonly origin: string;
  readonly transport: Transport;
  /** The CA the TLS server's certificate is signed by. */
  readonly ca?: Buffer;
}

export type StreamEnd =
  | { readonly kind: 'closed'; readonly close: Record<string, unknown> }
  | { readonly kind: 'ended_without_close' }
  | { readonly kind: 'reset'; readonly detail: string };

interface Body {
  pause(): void;
  resume(): void;
  destroy(): void;
}

const PLAIN_AGENT = new HttpAgent({ keepAlive: false, maxSockets: Infinity });

export class PausableStream {
  readonly frames: RawFrame[] = [];
  /** Sequences of the notification frames, in arrival order. */
  readonly sequences: number[] = [];
  closeFrame: Record<string, unknown> | undefined;
  requestId = '';
  status = 0;
  private outcome: StreamEnd | undefined;
  private readonly endWaiters: ((end: StreamEnd) => void)[] = [];
  private body: Body | undefined;
  private session: ClientHttp2Session | undefined;
  private readonly parser = createParser({
    onEvent: (message) => {
      const frame = { event: message.event ?? 'message', data: message.data };
      this.frames.push(frame);
      // Control frames share the `live-notification` event; a CloudEvent's sorted keys start with `data`.
      if ((frame.event === 'live-notification' || frame.event === 'replay') && frame.data.startsWith('{"data":')) {
        this.sequences.push(sequenceOf(frame));
      }
      if (frame.event === 'connection-closing') this.closeFrame = JSON.parse(frame.data) as Record<string, unknown>;
      this.firstFrame?.();
      this.firstFrame = undefined;
    },
  });
  private firstFrame: (() => void) | undefined;

  private constructor(private readonly target: StreamTarget) {}

  /** Opens `path` (`body` sent as JSON with POST; a GET when `body` is a query string) and resolves at its first frame. */
  static async open(target: StreamTarget, path: string, body: Record<string, unknown> | string): Promise<PausableStream> {
    const stream = new PausableStream(target);
    const opened = new Promise<void>((resolve, reject) => {
      stream.firstFrame = resolve;
      void stream
        .ended()
        .then((end) => reject(new Error(`stream ended before its first frame: ${JSON.stringify(end)} (status ${stream.status})`)));
    });
    if (target.transport === 'h2') stream.openHttp2(path, body);
    else stream.openHttp1(path, body);
    await opened;
    return stream;
  }

  get hasEnded(): boolean {
    return this.outcome !== undefined;
  }

  /** How the stream ended, once it has. */
  ended(): Promise<StreamEnd> {
    if (this.outcome) return Promise.resolve(this.outcome);
    return new Promise((resolve) => this.endWaiters.push(resolve));
  }

  pause(): void {
    this.body?.pause();
  }

  resume(): void {
    this.body?.resume();
  }

  destroy(): void {
    this.body?.destroy();
    this.session?.destroy();
  }

  private finish(end: StreamEnd): void {
    if (this.outcome) return;
    this.outcome = end;
    this.session?.close();
    for (const wake of this.endWaiters.splice(0)) wake(end);
  }

  /** The end of the response body: a stream that sent its close frame ended properly. */
  private bodyEnded(): void {
    this.finish(this.closeFrame ? { kind: 'closed', close: this.closeFrame } : { kind: 'ended_without_close' });
  }

  private feed(chunk: Buffer | string): void {
    this.parser.feed(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
  }

  private openHttp1(path: string, body: Record<string, unknown> | string): void {
    const url = new URL(this.target.origin);
    const get = typeof body === 'string';
    const text = get ? undefined : JSON.stringify(body);
    const tls = this.target.transport === 'https/1.1';
    const options = {
      host: url.hostname,
      port: url.port,
      path: get ? `${path}?${body}` : path,
      method: get ? 'GET' : 'POST',
      headers: text === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
    };
    const onResponse = (response: IncomingMessage): void => {
      this.status = response.statusCode ?? 0;
      this.requestId = String(response.headers['x-request-id'] ?? '');
      this.body = response;
      response.on('data', (chunk: Buffer) => this.feed(chunk));
      response.on('end', () => this.bodyEnded());
      response.on('error', (error) => this.finish({ kind: 'reset', detail: (error as NodeJS.ErrnoException).code ?? error.message }));
      response.on('close', () => {
        if (!response.complete) this.finish({ kind: 'reset', detail: 'connection closed mid-response' });
      });
    };
    const outgoing = tls
      ? httpsRequest(
          { ...options, agent: new HttpsAgent({ ca: this.target.ca, keepAlive: false, ALPNProtocols: ['http/1.1'] }) },
          onResponse,
        )
      : httpRequest({ ...options, agent: PLAIN_AGENT }, onResponse);
    outgoing.on('error', (error) => this.finish({ kind: 'reset', detail: (error as NodeJS.ErrnoException).code ?? error.message }));
    outgoing.end(text);
  }

  private openHttp2(path: string, body: Record<string, unknown> | string): void {
    const session = connectHttp2(this.target.origin, { ca: this.target.ca });
    this.session = session;
    session.on('error', () => undefined);
    const get = typeof body === 'string';
    const text = get ? undefined : JSON.stringify(body);
    const stream: ClientHttp2Stream = session.request({
      ':method': get ? 'GET' : 'POST',
      ':path': get ? `${path}?${body}` : path,
      ...(text === undefined ? {} : { 'content-type': 'application/json' }),
    });
    this.body = stream;
    stream.on('response', (headers) => {
      this.status = Number(headers[':status']);
      this.requestId = String(headers['x-request-id'] ?? '');
    });
    stream.on('data', (chunk: Buffer) => this.feed(chunk));
    // A reset stream emits `end` too once its data is read: only `close` tells the two apart.
    stream.on('error', () => undefined);
    stream.on('close', () => {
      if (stream.rstCode !== undefined && stream.rstCode !== http2Constants.NGHTTP2_NO_ERROR) {
        this.finish({ kind: 'reset', detail: `RST_STREAM ${stream.rstCode}` });
      } else {
        this.bodyEnded();
      }
    });
    stream.end(text);
  }
}
