import { constants as http2Constants, type Http2ServerRequest, type ServerHttp2Stream } from 'node:http2';
import { PassThrough, type Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { apiError, type ApiError } from '../routes/api-error.js';
import { clientError } from '../routes/error-bodies.js';
import { resetHttp2Stream } from './http2-reset-flood.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** An HTTP/2 request whose body is still to come: the clock that bounds its receipt. */
    http2Receipt: RequestReceipt | undefined;
  }
}

/** How long a timed-out stream may take to send its 408 before it is reset anyway. */
const ANSWER_GRACE_MS = 2000;

/** The 408 of a request not received in time, in the API's error shape (the HTTP/1.1 one). */
export function requestTimeoutError(): ApiError {
  return clientError('ERR_HTTP_REQUEST_TIMEOUT');
}

/**
 * `application.request_timeout_ms` for HTTP/2 streams (docs/security.md, "TLS and HTTP/2"). Node
 * enforces it only for HTTP/1.1: an HTTP/2 stream whose body arrives a byte at a time would hold
 * its stream, and the request's memory, for as long as the client keeps sending.
 *
 * The clock starts when the stream's head is complete (the request reaches fastify) and stops when
 * the client ends the stream. When it runs out first, the stream is answered `408 REQUEST_TIMEOUT`
 * through the error handler if its response has not started, then reset with `NO_ERROR` (RFC 9113 §8.1:
 * a complete answer, and the client may stop sending); a stream whose response has started
 * is reset. The connection and its other streams go on. A stream already streaming its response
 * with the request complete (a watch) is never touched: the bound is on receiving the request.
 */
export function limitHttp2RequestTime(app: FastifyInstance, timeoutMs: number): void {
  app.decorateRequest('http2Receipt', undefined);
  app.addHook('onRequest', async (request, reply) => {
    // isHttp2 (server-transport.ts) inlined: that module installs this one.
    if (request.raw.httpVersionMajor !== 2) return;
    const raw = request.raw as unknown as Http2ServerRequest;
    if (raw.stream.endAfterHeaders) return;
    request.http2Receipt = new RequestReceipt(raw, reply, timeoutMs);
  });
  // The body is read through a guard the clock can fail, so fastify's own body reading ends with
  // the 408 and no handler runs on a request that was not received. The guard also fails when the
  // client resets its stream before the body ended: Node's compatibility request then just ends,
  // and fastify would handle the part that came as the whole request (HTTP/1.1 reports it aborted).
  app.addHook('preParsing', async (request: FastifyRequest, _reply, payload) => request.http2Receipt?.guard(payload) ?? payload);
}

/** The answer fastify tries to give a request whose client reset the stream: nobody receives it. */
function abortedRequestError(): ApiError {
  return apiError('BAD_REQUEST', ['The client reset the stream before the request was complete']);
}

class RequestReceipt {
  private readonly stream: ServerHttp2Stream;
  private readonly timer: NodeJS.Timeout;
  private body: PassThrough | undefined;
  private expired = false;

  constructor(
    private readonly request: Http2ServerRequest,
    private readonly reply: FastifyReply,
    timeoutMs: number,
  ) {
    this.stream = request.stream;
    this.timer = setTimeout(() => this.expire(), timeoutMs);
    this.timer.unref();
    this.stream.once('close', () => clearTimeout(this.timer));
  }

  /** The body fastify reads: the request's own, until the clock runs out or the client resets. */
  guard(payload: Readable): Readable {
    if (this.expired) throw requestTimeoutError();
    const body = new PassThrough();
    // fastify listens for the failure; this listener only keeps an unread body's failure quiet.
    body.on('error', () => undefined);
    payload.once('end', () => clearTimeout(this.timer));
    this.request.once('aborted', () => body.destroy(abortedRequestError()));
    payload.pipe(body);
    this.body = body;
    return body;
  }

  private expire(): void {
    const stream = this.stream;
    if (stream.destroyed || stream.closed || stream.state.remoteClose === 1) return;
    this.expired = true;
    if (this.reply.raw.headersSent) {
      resetHttp2Stream(stream, this.reply.raw.writableEnded ? http2Constants.NGHTTP2_NO_ERROR : http2Constants.NGHTTP2_CANCEL);
      return;
    }
    // fastify answers the 408 when it is reading the body; a request still in its earlier hooks
    // gets it from `guard`. Either way the stream is reset once the answer is out.
    this.body?.destroy(requestTimeoutError());
    const reset = setTimeout(() => resetHttp2Stream(stream, http2Constants.NGHTTP2_CANCEL), ANSWER_GRACE_MS);
    reset.unref();
    stream.once('close', () => clearTimeout(reset));
    // The stream's own `finish` (its response is out); the compatibility response's comes only at close.
    stream.once('finish', () => stream.close(http2Constants.NGHTTP2_NO_ERROR));
  }
}
