import { connect as connectHttp2, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import { Agent, request as httpsRequest } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { connect as connectTls, type TLSSocket } from 'node:tls';
import type { Readable } from 'node:stream';
import { SseEventQueue } from './sse-event-queue.js';

export interface ProtocolResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  readonly json: Record<string, unknown>;
}

export interface RequestOptions {
  readonly method?: string;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

/**
 * One HTTPS client per protocol, both speaking to the real server over its TLS port: Node's
 * `http2` module on one shared session, or `https` (HTTP/1.1) with a keep-alive agent.
 */
export interface ProtocolClient {
  readonly protocol: 'h2' | 'http/1.1';
  request(path: string, options?: RequestOptions): Promise<ProtocolResponse>;
  /** POSTs a stream request (a GET one when `body` is undefined) and reads its SSE frames as they arrive. */
  stream(path: string, body: unknown, headers?: Record<string, string>): Promise<ProtocolStream>;
  /** The ALPN protocol the TLS connection negotiated. */
  negotiatedProtocol(): Promise<string | false>;
  close(): void;
}

function bodyText(body: unknown): string | undefined {
  if (body === undefined) return undefined;
  return typeof body === 'string' ? body : JSON.stringify(body);
}

function parseJson(text: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return {};
  }
}

async function readAll(stream: Readable): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += (chunk as Buffer).toString('utf8');
  return text;
}

/** SSE frames of one response; `next` waits for the following one. Data that is not JSON reads as `{}`. */
export class ProtocolStream extends SseEventQueue {
  constructor(
    readonly status: number,
    readonly headers: IncomingHttpHeaders,
    private readonly body: Readable,
    private readonly cancel: () => void,
  ) {
    super({ json: parseJson });
    body.setEncoding('utf8');
    body.on('data', (text: string) => this.feed(text));
    const end = (): void => this.finish();
    body.on('end', end);
    body.on('close', end);
    body.on('error', end);
  }

  close(): void {
    this.cancel();
    this.body.destroy();
  }
}

/** HTTP/2 on one session, as the aviso client and browsers multiplex their streams. */
export function http2Client(origin: string, ca: Buffer): ProtocolClient {
  const session: ClientHttp2Session = connectHttp2(origin, { ca });
  session.on('error', () => undefined);
  const open = (path: string, options: RequestOptions) => {
    const body = bodyText(options.body);
    const stream = session.request(
      {
        ':method': options.method ?? (body === undefined ? 'GET' : 'POST'),
        ':path': path,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...options.headers,
      },
      { endStream: body === undefined },
    );
    if (body !== undefined) stream.end(body);
    return new Promise<{ status: number; headers: IncomingHttpHeaders; stream: typeof stream }>((resolve, reject) => {
      stream.once('response', (headers) => resolve({ status: Number(headers[':status']), headers, stream }));
      stream.once('error', reject);
    });
  };
  return {
    protocol: 'h2',
    async request(path, options = {}) {
      const { status, headers, stream } = await open(path, options);
      const text = await readAll(stream);
      return { status, headers, text, json: parseJson(text) };
    },
    async stream(path, body, headers = {}) {
      const response = await open(path, { body, headers });
      return new ProtocolStream(response.status, response.headers, response.stream, () => response.stream.close());
    },
    async negotiatedProtocol() {
      if (!session.alpnProtocol) await new Promise((resolve) => session.once('connect', resolve));
      return session.alpnProtocol ?? false;
    },
    close: () => session.close(),
  };
}

/** HTTPS with HTTP/1.1 only (ALPN offers `http/1.1`), keep-alive like a browser's connection pool. */
export function https1Client(origin: string, ca: Buffer): ProtocolClient {
  const agent = new Agent({ ca, keepAlive: true, ALPNProtocols: ['http/1.1'] });
  const base = new URL(origin);
  let lastSocket: TLSSocket | undefined;
  const open = (path: string, options: RequestOptions) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      const body = bodyText(options.body);
      const outgoing = httpsRequest(
        {
          host: base.hostname,
          port: base.port,
          path,
          method: options.method ?? (body === undefined ? 'GET' : 'POST'),
          agent,
          // Node's client frames a DELETE body with no length at all unless told one.
          headers: {
            ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }),
            ...options.headers,
          },
        },
        (response) => {
          lastSocket = response.socket as TLSSocket;
          resolve(response);
        },
      );
      outgoing.once('error', reject);
      outgoing.end(body);
    });
  return {
    protocol: 'http/1.1',
    async request(path, options = {}) {
      const response = await open(path, options);
      const text = await readAll(response);
      return { status: response.statusCode ?? 0, headers: response.headers, text, json: parseJson(text) };
    },
    async stream(path, body, headers = {}) {
      const response = await open(path, { body, headers });
      return new ProtocolStream(response.statusCode ?? 0, response.headers, response, () => response.destroy());
    },
    async negotiatedProtocol() {
      if (!lastSocket) await this.request('/health');
      return lastSocket?.alpnProtocol ?? false;
    },
    close: () => agent.destroy(),
  };
}

/**
 * Over TLS with HTTP/1.1 (ALPN `http/1.1`): writes the chunks `gapMs` apart, the last one
 * repeating until the server closes the connection, and resolves with everything read. A
 * slow-loris client on the TLS port (the plain port's is in test/reliability/hostile-input.test.ts).
 */
export function tlsDripExchange(port: number, ca: Buffer, chunks: readonly string[], gapMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connectTls({ host: '127.0.0.1', port, ca, servername: 'localhost', ALPNProtocols: ['http/1.1'] });
    let received = '';
    let index = 0;
    let timer: NodeJS.Timeout | undefined;
    const writeNext = (): void => {
      if (socket.destroyed || !socket.writable) return;
      const chunk = chunks[Math.min(index, chunks.length - 1)] as string;
      index++;
      if (chunk !== '') socket.write(Buffer.from(chunk, 'latin1'));
      timer = setTimeout(writeNext, gapMs);
    };
    socket.once('secureConnect', writeNext);
    socket.on('data', (data: Buffer) => (received += data.toString('latin1')));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
  });
}

/** What an HTTP/2 request whose body is sent a byte at a time was answered. */
export interface DrippedHttp2Answer extends ProtocolResponse {
  /** The stream was closed by the server, with this RST_STREAM code (0: NO_ERROR). */
  readonly rstCode: number | undefined;
}

/**
 * On `session`: a request with `headers` whose body is `first` and then `drip` every `gapMs`,
 * never ended, until the server answers and closes the stream.
 */
export function dripHttp2Body(
  session: ClientHttp2Session,
  headers: Record<string, string>,
  first: string,
  drip: string,
  gapMs: number,
): Promise<DrippedHttp2Answer> {
  const stream = session.request(headers);
  stream.on('error', () => undefined);
  stream.write(first);
  const timer = setInterval(() => {
    if (!stream.destroyed && stream.writable) stream.write(drip);
  }, gapMs);
  return new Promise((resolve, reject) => {
    let status = 0;
    let responseHeaders: IncomingHttpHeaders = {};
    let text = '';
    stream.once('response', (head) => {
      status = Number(head[':status']);
      responseHeaders = head;
    });
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => (text += chunk));
    stream.once('close', () => {
      clearInterval(timer);
      if (session.destroyed && status === 0) reject(new Error('the session was closed before an answer'));
      else resolve({ status, headers: responseHeaders, text, json: parseJson(text), rstCode: stream.rstCode });
    });
  });
}
