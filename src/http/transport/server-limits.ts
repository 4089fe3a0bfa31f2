import type { ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyServerOptions } from 'fastify';
import type { Logger } from 'pino';
import { canonicalJson } from '../../json/canonical-json.js';
import { ERROR_CODES } from '../routes/error-codes.js';
import { generateRequestId } from './request-id.js';

/** The connection limits of `application` (docs/security.md), as the config model names them. */
export interface ServerLimits {
  readonly max_header_bytes: number;
  readonly headers_timeout_ms: number;
  readonly request_timeout_ms: number;
  readonly keep_alive_timeout_ms: number;
  readonly max_connections: number;
  /** Watch and replay streams the process holds at once (D44); fewer than `max_connections`. */
  readonly max_streams: number;
}

/** Used when a caller (a unit test) builds the app without configuration: the model's defaults. */
export const DEFAULT_SERVER_LIMITS: ServerLimits = {
  max_header_bytes: 16384,
  headers_timeout_ms: 30000,
  request_timeout_ms: 60000,
  keep_alive_timeout_ms: 72000,
  max_connections: 11000,
  max_streams: 10000,
};

/**
 * Node enforces the head and request timeouts from a periodic sweep (30 s by default), so a
 * short timeout would be overrun by up to that much; sweep at most every second, and at least
 * twice per head timeout.
 */
export function connectionsCheckingInterval(limits: ServerLimits): number {
  return Math.max(50, Math.min(1000, Math.floor(limits.headers_timeout_ms / 2)));
}

/**
 * Fastify options carrying the limits. `request_timeout_ms` only bounds *receiving* a request:
 * Node stops the clock once the request is complete, so long-lived SSE responses are unaffected.
 */
export function serverLimitOptions(
  limits: ServerLimits,
  logger: Logger,
): Pick<FastifyServerOptions, 'keepAliveTimeout' | 'requestTimeout' | 'clientErrorHandler'> & { http: ServerOptions } {
  return {
    keepAliveTimeout: limits.keep_alive_timeout_ms,
    requestTimeout: limits.request_timeout_ms,
    http: {
      maxHeaderSize: limits.max_header_bytes,
      headersTimeout: limits.headers_timeout_ms,
      requestTimeout: limits.request_timeout_ms,
      connectionsCheckingInterval: connectionsCheckingInterval(limits),
    },
    clientErrorHandler: (error: Error & { code?: string }, socket: Socket) => answerClientError(error, socket, logger),
  };
}

interface ClientErrorAnswer {
  readonly status: number;
  readonly reason: string;
  readonly code: 'REQUEST_TIMEOUT' | 'HEADERS_TOO_LARGE' | 'BAD_REQUEST';
  readonly error: string;
  readonly message: string;
}

/** What a request that never reached the router gets (docs/design/rules/api.md §9.1 shape: code, error, message, request_id). */
export function describeClientError(errorCode: string | undefined): ClientErrorAnswer {
  switch (errorCode) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return clientErrorAnswer('REQUEST_TIMEOUT', 'Request Timeout', ERROR_CODES.REQUEST_TIMEOUT.message);
    case 'HPE_HEADER_OVERFLOW':
      return clientErrorAnswer('HEADERS_TOO_LARGE', 'Request Header Fields Too Large', ERROR_CODES.HEADERS_TOO_LARGE.message);
    default:
      return clientErrorAnswer('BAD_REQUEST', 'Bad Request', 'Malformed HTTP request');
  }
}

/** The answer of `code` from the table, with the reason phrase of its status line. */
function clientErrorAnswer(code: ClientErrorAnswer['code'], reason: string, message: string): ClientErrorAnswer {
  const { status, error } = ERROR_CODES[code];
  return { status, reason, code, error, message };
}

/**
 * Replaces fastify's default client-error answer (its own body shape, no request id) with the
 * API's error shape, then closes the connection as Node does: the request stream is unusable.
 */
function answerClientError(error: Error & { code?: string }, socket: Socket, logger: Logger): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (isTlsFailure(error.code)) {
    // Node's HTTP/2 server hands a failed or timed-out TLS handshake to this handler too. There is
    // no HTTP exchange to answer on such a socket, and waiting for a graceful end would hold its
    // TLS state past `headers_timeout_ms` (docs/security.md, "TLS and HTTP/2").
    logger.debug({ event_name: 'http.tls.handshake.failed', error_code: error.code }, 'TLS handshake failed');
    socket.destroy();
    return;
  }
  const answer = describeClientError(error.code);
  const requestId = generateRequestId();
  logger.debug(
    { event_name: 'http.client.error', request_id: requestId, error_code: error.code ?? 'unknown', status_code: answer.status },
    'Client error before routing',
  );
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = canonicalJson({ code: answer.code, error: answer.error, message: answer.message, request_id: requestId });
  // `end` flushes the answer first; the HTTP server allows half-open sockets, so a client that
  // never closes its side is cut off shortly after.
  socket.end(
    `HTTP/1.1 ${answer.status} ${answer.reason}\r\n` +
      'Content-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-ID: ${requestId}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
  setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
}

/** Node's codes for TLS failures: its own (`ERR_TLS_HANDSHAKE_TIMEOUT`) and OpenSSL's (`ERR_SSL_…`). */
function isTlsFailure(code: string | undefined): boolean {
  return code !== undefined && (code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_'));
}

/** How long a refused client may take to read its error answer before the socket is destroyed. */
const CLOSE_GRACE_MS = 2000;
