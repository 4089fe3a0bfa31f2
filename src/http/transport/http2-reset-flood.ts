import { constants as http2Constants, type Http2SecureServer, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';
import type { Logger } from 'pino';

/** How long after a client's last stream reset its connection is asked for a PING answer. */
export const PROBE_AFTER_RESET_MS = 1_000;
/** How long that answer may take before the connection is closed. */
export const PROBE_ANSWER_MS = 2_000;

/** Streams the server itself reset: their close is not a client's reset. */
const resetByServer = new WeakSet<ServerHttp2Stream>();

/** Resets one HTTP/2 stream from the server side (RST_STREAM `code`), so it is not taken for a client's reset. */
export function resetHttp2Stream(stream: ServerHttp2Stream, code: number): void {
  resetByServer.add(stream);
  stream.close(code);
}

/**
 * Closes the connections nghttp2 has given up on after a rapid reset (D44, docs/security.md
 * "HTTP/2 under attack"). When a client resets streams faster than nghttp2 allows (a burst of
 * 1,000, then 33 a second), nghttp2 sends `GOAWAY INTERNAL_ERROR` and stops reading, but Node
 * neither closes the connection nor tells the application: it stayed open until the session
 * timeout, counting against `max_connections`. What the application can see is the resets
 * themselves, so a connection on which the client reset a stream is sent a PING
 * `PROBE_AFTER_RESET_MS` after the last reset (one at a time, again after each answer if it reset
 * more meanwhile). A client that reads answers at once; a connection nghttp2 stopped serving
 * cannot even send the PING, so no answer comes, and after `PROBE_ANSWER_MS` it is closed.
 */
export function closeAfterResetFloods(server: Http2SecureServer, logger: Logger): void {
  server.on('session', (session: ServerHttp2Session) => {
    const probe = new ResetProbe(session, logger);
    session.on('stream', (stream: ServerHttp2Stream) => {
      stream.once('close', () => {
        if (stream.rstCode !== undefined && stream.rstCode !== http2Constants.NGHTTP2_NO_ERROR && !resetByServer.has(stream)) {
          probe.clientReset();
        }
      });
    });
    session.once('close', () => probe.stop());
  });
}

/** The PING of one connection after its client reset streams. */
class ResetProbe {
  private scheduled: NodeJS.Timeout | undefined;
  private awaiting: NodeJS.Timeout | undefined;
  private resetSinceProbe = false;

  constructor(
    private readonly session: ServerHttp2Session,
    private readonly logger: Logger,
  ) {}

  clientReset(): void {
    if (this.isOver()) return;
    this.resetSinceProbe = true;
    if (this.scheduled === undefined && this.awaiting === undefined) this.schedule();
  }

  stop(): void {
    clearTimeout(this.scheduled);
    clearTimeout(this.awaiting);
    this.scheduled = undefined;
    this.awaiting = undefined;
  }

  /** Destroyed, or closing gracefully (shutdown): the shutdown grace bounds it, not this probe. */
  private isOver(): boolean {
    return this.session.destroyed || this.session.closed;
  }

  private schedule(): void {
    this.scheduled = setTimeout(() => this.probe(), PROBE_AFTER_RESET_MS);
    this.scheduled.unref();
  }

  private probe(): void {
    this.scheduled = undefined;
    if (this.isOver()) return;
    this.resetSinceProbe = false;
    this.awaiting = setTimeout(() => this.close(), PROBE_ANSWER_MS);
    this.awaiting.unref();
    try {
      // Not sent (as many PINGs unanswered as Node allows): the deadline stands, the client is not reading.
      this.session.ping((error) => {
        if (error || this.awaiting === undefined) return;
        clearTimeout(this.awaiting);
        this.awaiting = undefined;
        if (this.resetSinceProbe) this.schedule();
      });
    } catch {
      // Only a session that is closing throws; its own close ends it.
    }
  }

  private close(): void {
    this.awaiting = undefined;
    if (this.session.destroyed) return;
    this.logger.debug(
      { event_name: 'http.client.error', error_code: 'ERR_HTTP2_RESET_FLOOD', protocol: 'h2' },
      'HTTP/2 connection answered no PING after resetting streams: closed',
    );
    this.session.destroy();
  }
}
