import { constants as http2Constants, type Http2SecureServer, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';

/** What is known of one session's request heads. */
interface SessionHeads {
  readonly connectedAt: number;
  /** The highest stream id whose head was complete (a `stream` event). */
  completed: number;
  /** A stream whose head has begun and not ended: since when, and whether a PING asked about it. */
  pending: { readonly id: number; readonly since: number; probed: boolean } | undefined;
}

/**
 * `application.headers_timeout_ms` for HTTP/2 (docs/security.md, "TLS and HTTP/2"). Node's http2
 * module bounds no request head: a client can start a HEADERS frame and send the rest of its
 * header block (CONTINUATION frames) a byte at a time, and the session's idle timeout only starts
 * a graceful close, which waits for that block for ever. A connection that sends no request at
 * all lasts the idle timeout (`keep_alive_timeout_ms`), where HTTP/1.1 gets `headers_timeout_ms`.
 *
 * Node reveals a head only once it is complete, but the session's `lastProcStreamID` is the
 * stream whose HEADERS frame was last begun: above the last stream Node delivered, a head is
 * pending, or its stream was refused or reset before it was delivered. A PING tells them apart:
 * HTTP/2 lets nothing interleave a header block (RFC 9113 §6.10), so a client still sending one
 * cannot acknowledge it. A head pending for `headers_timeout_ms` closes the connection with
 * GOAWAY `ENHANCE_YOUR_CALM` (the connection can carry nothing else until that block ends, its
 * other streams included); a session that completes no request head within `headers_timeout_ms`
 * of connecting is closed with GOAWAY `NO_ERROR`, as an HTTP/1.1 connection that sends no request.
 * Checked every `checkIntervalMs`, like Node's own sweep of HTTP/1.1 connections.
 */
export function limitHttp2HeadTime(server: Http2SecureServer, timeoutMs: number, checkIntervalMs: number, logger: Logger): void {
  const sessions = new Map<ServerHttp2Session, SessionHeads>();
  server.on('session', (session: ServerHttp2Session) => {
    const heads: SessionHeads = { connectedAt: performance.now(), completed: 0, pending: undefined };
    sessions.set(session, heads);
    session.on('stream', (stream: ServerHttp2Stream) => {
      const id = stream.id ?? 0;
      if (id > heads.completed) heads.completed = id;
    });
    session.once('close', () => sessions.delete(session));
  });
  const close = (session: ServerHttp2Session, code: number, reason: string): void => {
    sessions.delete(session);
    logger.debug({ event_name: 'http.client.error', error_code: 'ERR_HTTP_REQUEST_TIMEOUT', protocol: 'h2' }, reason);
    session.destroy(code === http2Constants.NGHTTP2_NO_ERROR ? undefined : new Http2HeadTimeout(), code);
  };
  const check = (): void => {
    const now = performance.now();
    for (const [session, heads] of sessions) {
      if (session.destroyed) continue;
      const begun = session.state.lastProcStreamID ?? 0;
      if (begun <= heads.completed) {
        heads.pending = undefined;
        if (heads.completed === 0 && now - heads.connectedAt >= timeoutMs) {
          close(session, http2Constants.NGHTTP2_NO_ERROR, 'HTTP/2 connection sent no request in time: closed');
        }
        continue;
      }
      if (heads.pending?.id !== begun) heads.pending = { id: begun, since: now, probed: false };
      const pending = heads.pending;
      if (!pending.probed) {
        pending.probed = probe(session, () => {
          // Acknowledged: no header block is open, the stream was refused or reset before delivery.
          if (heads.pending === pending) heads.pending = undefined;
          if (pending.id > heads.completed) heads.completed = pending.id;
        });
      }
      if (now - pending.since >= timeoutMs) {
        close(session, http2Constants.NGHTTP2_ENHANCE_YOUR_CALM, 'HTTP/2 request head not received in time: connection closed');
      }
    }
  };
  let sweep: NodeJS.Timeout | undefined;
  server.on('listening', () => {
    sweep = setInterval(check, checkIntervalMs);
    sweep.unref();
  });
  server.on('close', () => clearInterval(sweep));
}

/**
 * Sends a PING and calls `acknowledged` when the client answers it; false when none could be sent
 * (the session is closing, or has as many PINGs in flight as it allows): the next check asks again.
 */
function probe(session: ServerHttp2Session, acknowledged: () => void): boolean {
  try {
    return session.ping((error) => {
      if (!error) acknowledged();
    });
  } catch {
    return false;
  }
}

/** The session error of a connection closed for a head that did not end in time. */
class Http2HeadTimeout extends Error {
  readonly code = 'ERR_HTTP_REQUEST_TIMEOUT';
  constructor() {
    super('HTTP/2 request head not received in time');
    this.name = 'Http2HeadTimeout';
  }
}
