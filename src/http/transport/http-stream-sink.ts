import type { FastifyReply } from 'fastify';
import type { ServerResponse } from 'node:http';
import type { EndListener, FrameWriter, StreamSink } from '../../streaming/stream-sink.js';
import { resetStream } from './connection-reset.js';
import { streamCorsHeaders } from '../routes/cors.js';
import { frameWriterFor } from './frame-writer.js';
import { withoutHttp1OnlyHeaders } from './http2-headers.js';
import { Http1StreamSink, withCorsHeaders } from './http1-stream-sink.js';

/**
 * Takes a stream's request over from fastify: from here on the stream writes the response itself.
 * Call it only once the stream will be sent; before, fastify still answers errors.
 */
export function takeOverForStream(reply: FastifyReply): StreamSink {
  reply.hijack();
  const cors = streamCorsHeaders(reply.request, reply);
  if (reply.request.raw.httpVersionMajor === 1) return new Http1StreamSink(reply.raw, cors);
  return new HttpStreamSink(reply.raw, cors);
}

/**
 * A stream's response over HTTP/1.1 or HTTP/2 (Node's compatibility API). With CORS configured
 * (docs/security.md "CORS") the policy's headers for the request's origin replace
 * the stream's `Access-Control-Allow-Origin: *`; an HTTP/2 head leaves out what HTTP/2 forbids.
 */
export class HttpStreamSink implements StreamSink {
  private chosenWriter: FrameWriter | undefined;

  constructor(
    private readonly response: ServerResponse,
    private readonly corsHeaders?: Readonly<Record<string, string>>,
  ) {}

  get heldBytes(): number {
    return this.response.writableLength;
  }

  get writable(): boolean {
    return !this.response.destroyed && !this.response.writableEnded;
  }

  open(status: number, headers: Readonly<Record<string, string>>): void {
    const head = this.corsHeaders === undefined ? headers : withCorsHeaders(headers, this.corsHeaders);
    this.response.writeHead(status, this.isHttp2 ? withoutHttp1OnlyHeaders(head) : head);
    this.response.flushHeaders();
  }

  /** Chosen once the head is out (frame-writer.ts); until then there is nothing to write to. */
  writer(): FrameWriter | undefined {
    if (!this.chosenWriter && this.response.headersSent) this.chosenWriter = frameWriterFor(this.response);
    return this.chosenWriter;
  }

  /**
   * The end is complete when Node handed everything to the kernel (`finish`) and, with
   * `closeConnection`, once the client closed its side too. An HTTP/2 stream is complete when it
   * closed: its `finish` can come while flow control still holds its data.
   */
  end(last: string, closeConnection: boolean, end: EndListener): void {
    const { response } = this;
    response.end(last);
    const socket = response.socket ?? response.req.socket;
    if (this.isHttp2) {
      response.once('close', () => end.settled());
    } else if (closeConnection && socket) {
      socket.once('close', () => end.settled());
      response.once('finish', () => {
        end.handedOver();
        // FIN after the data; the descriptor stays open until the client closes its side, so the
        // kernel keeps delivering what it holds for as long as the client reads.
        if (!socket.destroyed) socket.end();
      });
    } else {
      response.once('finish', () => end.settled());
      response.once('close', () => end.settled());
    }
  }

  reset(): void {
    resetStream(this.response);
  }

  onClientGone(listener: () => void): () => void {
    const { response } = this;
    // `close` before the stream ended the response means the client went away (or the socket died).
    response.once('close', listener);
    // A client that left while the stream was being set up will never emit `close` again. A
    // response queued behind another one on its keep-alive connection (pipelining, or a client
    // reusing the connection the moment it read the previous response) has no socket yet: the
    // request's socket says whether the client is still there, and its `close` whether it leaves.
    const socket = response.socket ?? response.req.socket;
    if (!socket || socket.destroyed) {
      queueMicrotask(listener);
      return () => undefined;
    }
    if (response.socket) return () => undefined;
    // Taken off once the stream is over: the connection may serve many more requests.
    socket.once('close', listener);
    return () => socket.removeListener('close', listener);
  }

  private get isHttp2(): boolean {
    return this.response.req.httpVersionMajor === 2;
  }
}
