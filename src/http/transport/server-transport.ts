import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2SecureServer, Http2ServerRequest, ServerHttp2Session } from 'node:http2';
import type { Socket } from 'node:net';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Logger } from 'pino';
import { clientError } from '../routes/error-bodies.js';
import { limitHttp2HeadTime } from './http2-head-timeout.js';
import { closeAfterResetFloods } from './http2-reset-flood.js';
import { limitHttp2RequestTime } from './http2-request-timeout.js';
import { limitConnections } from './connection-limit.js';
import { connectionsCheckingInterval, serverLimitOptions, type ServerLimits } from './server-limits.js';
import { connectionFree } from './http1-stream-sink.js';
import { secureServerOptions, type TlsMaterial } from './tls-options.js';

export interface Transport {
  /** `application.tls` read from its files; absent means plain HTTP/1.1. */
  readonly tls?: TlsMaterial | undefined;
  readonly limits: ServerLimits;
  readonly logger: Logger;
  /** Counts a connection refused by `max_connections` (`aviso_http_connections_refused_total`). */
  readonly connectionRefused: () => void;
}

/**
 * The fastify instance on its server: plain HTTP/1.1 exactly as without TLS, or HTTPS serving
 * HTTP/2 (ALPN `h2`) and HTTP/1.1 on one port (docs/design/rules/browser.md §3).
 *
 * The app is typed as the HTTP/1 instance either way: Node's HTTP/2 compatibility request and
 * response offer what routes use of them (headers, `writeHead`, `write`, `drain`, `close`), and
 * the few places that touch the transport itself check the protocol (`isHttp2`).
 */
export function createFastify(options: FastifyServerOptions, transport: Transport): FastifyInstance {
  const { tls, limits, logger } = transport;
  const limitOptions = serverLimitOptions(limits, logger);
  const connectionLimit = { maxConnections: limits.max_connections, logger, refused: transport.connectionRefused };
  if (tls === undefined) {
    const app = Fastify({ ...options, ...limitOptions });
    limitConnections(app.server, connectionLimit);
    waitForStreamsOnTheirConnections(app);
    return app;
  }
  // The same options: only the types of the raw request and response they mention differ.
  const shared = options as unknown as FastifyServerOptions<Http2SecureServer>;
  const app = Fastify({
    ...shared,
    http2: true,
    https: secureServerOptions(tls, limits),
    // An HTTP/2 connection without streams is closed after the keep-alive timeout, as an idle
    // HTTP/1.1 one is; open streams keep it busy with their heartbeats.
    http2SessionTimeout: limits.keep_alive_timeout_ms,
    clientErrorHandler: limitOptions.clientErrorHandler,
  });
  const server = app.server;
  const checkIntervalMs = connectionsCheckingInterval(limits);
  // Counted on the TCP connection, before the TLS handshake: a refused one costs no TLS work.
  limitConnections(server, connectionLimit);
  // HTTP/1.1 connections of this server are parsed by Node's http module, which reads these from
  // the server object: its head and request timeouts are swept as on the plain port (Node 20.12 and
  // later sweep an `allowHTTP1` server too, once it listens), with the same 408 answer (docs/security.md).
  Object.assign(server, {
    maxHeaderSize: limits.max_header_bytes,
    keepAliveTimeout: limits.keep_alive_timeout_ms,
    headersTimeout: limits.headers_timeout_ms,
    requestTimeout: limits.request_timeout_ms,
    connectionsCheckingInterval: checkIntervalMs,
  });
  const http2App = app as unknown as FastifyInstance;
  readBodiesWithoutLength(http2App);
  limitHeaderListSize(http2App, limits.max_header_bytes);
  // Node bounds neither for HTTP/2 streams: their heads and bodies are timed here.
  limitHttp2HeadTime(server, limits.headers_timeout_ms, checkIntervalMs, logger);
  limitHttp2RequestTime(http2App, limits.request_timeout_ms);
  // Node leaves a connection it sent GOAWAY for a rapid reset open until the session timeout (D44).
  closeAfterResetFloods(server, logger);
  const connections = trackConnections(server);
  // Shutdown (docs/design/rules/operations.md §4.2): no new streams on HTTP/2 connections, idle HTTP/1.1 ones closed;
  // what is in flight finishes. Node's http2 server does neither by itself before Node 24.
  app.addHook('preClose', async () => connections.closeIdle());
  return app as unknown as FastifyInstance;
}

/**
 * A plain HTTP/1.1 stream writes its connection itself once its head is out (`Http1StreamSink`),
 * and Node then takes the connection for idle. A request sent on it while the stream runs (a
 * pipelining client) is answered only after the stream's last chunk, as Node would have queued
 * it. (The server's close waits for such streams' last frames: app.ts.)
 */
function waitForStreamsOnTheirConnections(app: FastifyInstance): void {
  // A callback hook: no promise for the requests of free connections, nearly all of them.
  app.addHook('onRequest', (request, reply, done) => {
    // Node queues the response of a request that came before the one ahead of it was answered.
    const busy = connectionFree(request.raw.socket, reply.raw.socket === null);
    if (busy) void busy.then(() => done());
    else done();
  });
}

/**
 * fastify reads a body only when `Content-Length` or `Transfer-Encoding` announces one, which is
 * right for HTTP/1.1. An HTTP/2 request may send DATA frames without a `Content-Length` (Node's
 * http2 client does, and any streamed upload): the body then follows unless the HEADERS frame
 * ended the stream. Marking such a request as chunked makes fastify read it to its end.
 */
function readBodiesWithoutLength(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const raw = request.raw as unknown as Http2ServerRequest;
    if (!isHttp2(raw) || request.headers['content-length'] !== undefined || raw.stream.endAfterHeaders) return;
    request.headers['transfer-encoding'] = 'chunked';
  });
}

/**
 * `application.max_header_bytes` for HTTP/2: Node advertises SETTINGS_MAX_HEADER_LIST_SIZE but
 * does not enforce it on what it receives, so the header list is measured here (RFC 9113 §6.5.2:
 * name and value octets plus 32 per field) and a larger one is the 431 of HTTP/1.1, on this
 * stream only: the connection and its other streams go on. In `preParsing`, after the request
 * id header is set, before any body is read.
 */
function limitHeaderListSize(app: FastifyInstance, maxBytes: number): void {
  app.addHook('preParsing', async (request) => {
    if (!isHttp2(request.raw)) return;
    const raw = request.raw.rawHeaders;
    let size = 0;
    for (let index = 0; index < raw.length; index += 2) size += (raw[index]?.length ?? 0) + (raw[index + 1]?.length ?? 0) + 32;
    if (size > maxBytes) {
      throw clientError('HPE_HEADER_OVERFLOW');
    }
  });
}

/** True for a request that came over HTTP/2. */
export function isHttp2(request: Pick<IncomingMessage | Http2ServerRequest, 'httpVersionMajor'>): boolean {
  return request.httpVersionMajor === 2;
}

/** Closes every connection at once: the end of the shutdown grace (docs/design/rules/operations.md §4.2). */
export function closeAllConnections(server: object): void {
  const tracked = trackers.get(server);
  if (tracked) tracked.destroyAll();
  else (server as { closeAllConnections(): void }).closeAllConnections();
}

const trackers = new WeakMap<object, ConnectionTracker>();

function trackConnections(server: Http2SecureServer): ConnectionTracker {
  const tracker = new ConnectionTracker();
  server.on('secureConnection', (socket: Socket) => tracker.addSocket(socket));
  server.on('session', (session: ServerHttp2Session) => tracker.addSession(session));
  server.on('request', (request: IncomingMessage | Http2ServerRequest, response: ServerResponse) => {
    if (!isHttp2(request)) tracker.http1Request(request.socket, response);
  });
  trackers.set(server, tracker);
  return tracker;
}

/** The connections of the HTTPS server, which (unlike http.Server) cannot list or close its own. */
class ConnectionTracker {
  private readonly sockets = new Set<Socket>();
  private readonly sessions = new Set<ServerHttp2Session>();
  /** HTTP/1.1 sockets with a response in progress, and how many. */
  private readonly busy = new Map<Socket, number>();
  private closing = false;

  addSocket(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => {
      this.sockets.delete(socket);
      this.busy.delete(socket);
    });
  }

  addSession(session: ServerHttp2Session): void {
    if (this.closing) session.close();
    this.sessions.add(session);
    session.once('close', () => this.sessions.delete(session));
  }

  http1Request(socket: Socket, response: ServerResponse): void {
    this.busy.set(socket, (this.busy.get(socket) ?? 0) + 1);
    response.once('close', () => {
      const left = (this.busy.get(socket) ?? 1) - 1;
      if (left > 0) this.busy.set(socket, left);
      else this.busy.delete(socket);
      if (this.closing && left <= 0) socket.destroySoon();
    });
  }

  closeIdle(): void {
    this.closing = true;
    for (const session of this.sessions) session.close();
    for (const socket of this.sockets) {
      const http1 = !this.isHttp2Socket(socket);
      if (http1 && !this.busy.has(socket)) socket.destroySoon();
    }
  }

  destroyAll(): void {
    for (const session of this.sessions) session.destroy();
    for (const socket of this.sockets) socket.destroy();
  }

  private isHttp2Socket(socket: Socket): boolean {
    return (socket as Socket & { alpnProtocol?: string | false }).alpnProtocol === 'h2';
  }
}
