import type { ServerResponse } from 'node:http';
import { constants as http2Constants, type Http2ServerResponse } from 'node:http2';
import { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { resetHttp2Stream } from './http2-reset-flood.js';

/**
 * Ends a stream whose client did not read its end in time, so that the client learns it at once
 * (docs/streaming.md "Slow consumers").
 *
 * HTTP/1.1: the TCP connection is reset (RST). A plain `destroy()` would close the descriptor and
 * leave the kernel to deliver what it still holds; for a client whose receive window stays shut the
 * kernel gives up on that orphaned connection after its probes and drops it without telling the
 * client, whose socket then stays open and silent forever: the one failure a stream must never
 * have. A reset reaches even a zero window. Over TLS the reset goes to the TCP socket under it.
 *
 * HTTP/2: only this stream is reset (RST_STREAM CANCEL); the connection and its other streams go on.
 */
export function resetStream(response: ServerResponse): void {
  if (response.req.httpVersionMajor === 2) {
    const { stream } = response as unknown as Http2ServerResponse;
    if (!stream.destroyed) resetHttp2Stream(stream, http2Constants.NGHTTP2_CANCEL);
    return;
  }
  const socket = response.socket ?? response.req.socket;
  if (socket) resetSocket(socket);
}

/** HTTP/1.1: resets the connection (RST) under `socket`, TLS or not, and destroys it. */
export function resetSocket(socket: Socket): void {
  if (socket.destroyed) return;
  const tcp = tcpSocketOf(socket);
  if (tcp && !tcp.destroyed) {
    try {
      tcp.resetAndDestroy();
    } catch {
      // A socket without a TCP handle (not expected for a server connection) is destroyed below.
    }
  }
  socket.destroy();
}

/**
 * The TCP socket carrying a connection. Node's TLS server wraps the accepted TCP socket and keeps
 * it as the TLS socket's `_parent`; there is no public accessor for it.
 */
function tcpSocketOf(socket: Socket): Socket | undefined {
  if (!(socket instanceof TLSSocket)) return socket;
  const parent = (socket as unknown as { _parent?: unknown })._parent;
  return parent instanceof Socket ? parent : undefined;
}
