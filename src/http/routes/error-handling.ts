import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiError } from './api-error.js';
import { handlerAnswer, refusalOf } from './error-answers.js';
import { internalError, malformedUrlError, methodNotAllowedError, notFoundError, uriTooLongError } from './error-bodies.js';
import { errorCodeEntry } from './error-codes.js';
import { sendSortedJson } from './json-reply.js';
import { HTTP1_ONLY_HEADERS } from '../transport/http2-headers.js';
import type { RouteIndex } from './route-index.js';
import { isHttp2 } from '../transport/server-transport.js';

/**
 * The one place error bodies are written (docs/design/architecture.md "Errors"): what a route threw,
 * as error-answers.ts maps it, with the request id added; anything that is not a refusal a logged
 * 500 without internals.
 * Also answers unknown paths with 404 and known paths with the wrong method with 405 (D3), and
 * logs each request failure once with its event name (docs/design/rules/operations.md §3.4.3).
 */
export function registerErrorHandling(app: FastifyInstance, options: { routes: RouteIndex }): void {
  const { routes } = options;
  app.setErrorHandler((error: FastifyError, request, reply) => {
    // The route's body limit: `application.max_body_bytes`, or a route's own (batch notify, D48).
    const apiError = handlerAnswer(error, request.routeOptions.bodyLimit);
    if (isHttp2(request.raw)) {
      // fastify marks a refused upload `Connection: close`, which HTTP/2 forbids (http2-headers.ts).
      for (const name of HTTP1_ONLY_HEADERS) reply.removeHeader(name);
    } else if (apiError.statusCode === 413) {
      // On HTTP/2 the socket is the whole connection's: there the stream is reset, the connection stays.
      lingerBeforeClose(request.raw.socket);
    }
    if (refusalOf(error) === undefined && apiError.statusCode >= 500) {
      request.log.error({ event_name: 'http.request.unhandled_error', err: error }, 'Unhandled error');
    } else {
      logRequestFailure(request, apiError);
    }
    return sendApiError(request, reply, apiError);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed: string[] = [];
    // A route for this very method handed the request over (e.g. a missing static file): 404.
    const ownRoute = routes.patternOf(request.method, path) !== undefined;
    for (const method of ownRoute ? [] : routes.methods) {
      if (method === request.method) continue;
      const pattern = routes.patternOf(method, path);
      if (pattern === undefined) continue;
      allowed.push(method);
      request.matchedPathPattern = pattern;
    }
    allowed.sort();
    const error = allowed.length > 0 ? methodNotAllowedError(request.method, path, allowed) : notFoundError(request.method, path);
    return sendApiError(request, reply, error);
  });
}

/**
 * fastify's `frameworkErrors`: URLs its router refuses before any hook runs (a malformed percent
 * escape, an over-long path parameter). Without it they get fastify's own body and no request id.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  const apiError =
    error.code === 'FST_ERR_BAD_URL'
      ? malformedUrlError()
      : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? uriTooLongError()
        : internalError();
  request.log.info({ event_name: 'http.request.url.rejected', error_code: apiError.body.code }, apiError.body.message);
  void sendApiError(request, reply, apiError);
}

/** How long an over-limit upload is still read (and discarded) after its 413 was sent. */
const LINGER_MS = 2000;

/**
 * A 413 is sent before the body is read, with `Connection: close`. Closing a socket that still has
 * unread input makes the kernel send a reset, and a reset makes the client's kernel drop the 413
 * it has not read yet: a client that writes its whole body before reading (most do) would see
 * only "connection reset". So, as nginx and Apache do, the answer is followed by a half-close and
 * the rest of the upload is read and discarded for up to LINGER_MS before the socket is closed.
 */
function lingerBeforeClose(socket: Socket | null | undefined): void {
  if (!socket || socket.destroyed) return;
  socket.destroySoon = () => {
    if (socket.destroyed) return;
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    socket.once('end', () => socket.destroy());
    socket.end();
    socket.resume();
  };
}

function sendApiError(request: FastifyRequest, reply: FastifyReply, error: ApiError): FastifyReply {
  reply.headers(error.headers);
  return sendSortedJson(reply, error.statusCode, { ...error.body, request_id: request.id });
}

/** The line of a refusal, by the kind its code's entry names (docs/logging.md#requests); other codes get none here. */
function logRequestFailure(request: FastifyRequest, error: ApiError): void {
  const { code, message, details } = error.body;
  // A line quotes the client's value once (D45): `details` only where it says more than the message.
  const cause = details !== undefined && details !== message ? details : undefined;
  const fields = {
    outcome: 'error',
    error_code: code,
    error: error.body.error,
    error_type: error.body.error,
    error_message: message,
  };
  switch (errorCodeEntry(code).log) {
    case 'parse':
      request.log.warn(
        { event_name: 'api.request.parse.failed', ...fields, ...(cause ? { details: cause } : {}) },
        'Request parsing failed',
      );
      return;
    case 'validation':
      request.log.warn(
        { event_name: 'api.request.validation.failed', ...fields, ...(cause ? { error_chain: JSON.stringify([cause]) } : {}) },
        'Request validation failed',
      );
      return;
    case 'idempotency_conflict':
      // The client's own retry logic at work, not a server problem.
      request.log.info({ event_name: 'api.notification.idempotency.conflict', ...fields }, 'Idempotency-Key conflict');
      return;
    case 'processing':
      request.log.error({ event_name: 'api.request.processing.failed', ...fields, details }, 'Request processing failed');
      return;
    case 'stream_setup':
      request.log.error(
        { event_name: 'stream.sse.initialization.failed', ...fields, details, topic: error.body.topic },
        'Stream setup failed',
      );
      return;
    case undefined:
      return;
  }
}
