import { connect } from 'node:net';
import { ChunkedDecoder, SseScanner, type SseHandlers } from './sse-wire.js';

/**
 * One SSE stream on its own TCP socket, without node:http or an SSE library: the request is
 * written by hand, the response head is read once, and the body bytes go through `sse-wire.ts`.
 * For a fleet reading many thousands of frames a second, this leaves out the HTTP client's second
 * stream layer, string decoding of every chunk and a general SSE parser, so the readers take less
 * of the cores they share with the server they measure.
 */

export interface RawSseRequest {
  readonly host: string;
  readonly port: number;
  readonly path: string;
  readonly method: 'GET' | 'POST';
  readonly headers: Readonly<Record<string, string>>;
  /** Sent with `Content-Length` when not empty. */
  readonly body: string;
}

export interface RawSseCallbacks extends SseHandlers {
  /** A non-200 answer and its body (as much of it as arrived). */
  readonly onRefused: (status: number, body: string) => void;
  /** The connection is gone: the server ended the response or closed it, or it failed (`error`). */
  readonly onClose: (error: Error | undefined) => void;
}

const HEAD_END = Buffer.from('\r\n\r\n');
const MAX_HEAD_BYTES = 64 * 1024;

function requestText(request: RawSseRequest): string {
  const headers = { host: `${request.host}:${request.port}`, ...request.headers };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  const length = request.body === '' ? '' : `content-length: ${Buffer.byteLength(request.body)}\r\n`;
  return `${request.method} ${request.path} HTTP/1.1\r\n${lines.join('')}${length}\r\n${request.body}`;
}

function headerValue(head: string, name: string): string | undefined {
  const match = new RegExp(`\\r\\n${name}:[ \\t]*([^\\r]*)`, 'i').exec(head);
  return match?.[1]?.trim();
}

export function openRawSse(request: RawSseRequest, callbacks: RawSseCallbacks): { destroy(): void } {
  const socket = connect({ host: request.host, port: request.port, noDelay: true });
  let head: Buffer | undefined = Buffer.alloc(0);
  let onBody: ((bytes: Buffer) => void) | undefined;
  let failure: Error | undefined;
  let refusal: { status: number; pieces: Buffer[] } | undefined;

  const reportRefusal = (): void => {
    if (refusal === undefined) return;
    callbacks.onRefused(refusal.status, Buffer.concat(refusal.pieces).toString('utf8'));
    refusal = undefined;
  };

  /** What reads the body bytes after `headText`. */
  const bodyReader = (headText: string): ((bytes: Buffer) => void) => {
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(headText)?.[1] ?? 0);
    const chunked = /chunked/i.test(headerValue(headText, 'transfer-encoding') ?? '');
    let sink: (bytes: Buffer) => void;
    if (status === 200) {
      const scanner = new SseScanner(callbacks);
      sink = (bytes) => scanner.push(bytes);
    } else {
      const pieces: Buffer[] = [];
      refusal = { status, pieces };
      sink = (bytes) => pieces.push(Buffer.from(bytes));
    }
    if (chunked) {
      const decoder = new ChunkedDecoder(sink);
      return (bytes) => {
        decoder.push(bytes);
        if (decoder.done) socket.destroy();
      };
    }
    const length = headerValue(headText, 'content-length');
    // An SSE body without chunked framing (Nchan's) runs until the connection closes.
    if (status === 200 || length === undefined) return sink;
    let remaining = Number(length);
    if (remaining === 0) socket.destroy();
    return (bytes) => {
      sink(bytes.subarray(0, remaining));
      remaining -= Math.min(remaining, bytes.length);
      if (remaining === 0) socket.destroy();
    };
  };

  socket.on('data', (chunk: Buffer) => {
    try {
      if (onBody !== undefined) {
        onBody(chunk);
        return;
      }
      head = Buffer.concat([head as Buffer, chunk]);
      const end = head.indexOf(HEAD_END);
      if (end < 0) {
        if (head.length > MAX_HEAD_BYTES) socket.destroy(new Error('response head too large'));
        return;
      }
      const rest = head.subarray(end + HEAD_END.length);
      const read = bodyReader(head.toString('latin1', 0, end));
      onBody = read;
      head = undefined;
      if (rest.length > 0) read(rest);
    } catch (error) {
      socket.destroy(error instanceof Error ? error : new Error(String(error)));
    }
  });
  socket.on('error', (error) => (failure = error));
  socket.on('close', () => {
    reportRefusal();
    callbacks.onClose(failure);
  });
  socket.write(requestText(request));
  return { destroy: () => socket.destroy() };
}
