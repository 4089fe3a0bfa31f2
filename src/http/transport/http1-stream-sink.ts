import type { ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import type { EndListener, FrameWriter, StreamSink } from '../../streaming/stream-sink.js';
import { resetSocket } from './connection-reset.js';
import { chunkOf, frameWriterFor, writeAfterFrames } from './frame-writer.js';

/** The last chunk of a chunked body. */
const LAST_CHUNK = Buffer.from('0\r\n\r\n', 'latin1');

/**
 * The streams that write their connection themselves. Node takes such a connection for idle: a
 * request that comes on it meanwhile must wait until the stream ended there (`connectionFree`), and
 * so must the server's close, which would otherwise destroy it with the stream's last frames still
 * unwritten (`streamsEnded`). Kept without a promise or listener of each stream's own: the waits
 * are made only when asked for.
 */
const streamOfConnection = new WeakMap<Socket, Http1StreamSink>();
const streamsWritingThemselves = new Set<Http1StreamSink>();

/** Connections on which a request came while an earlier response was still going (pipelining). */
const connectionsWithQueuedRequests = new WeakSet<Socket>();

/**
 * Called as each request arrives: resolves once the stream on its connection ended, or undefined
 * when no stream writes it. A request whose response Node queued behind another one keeps every
 * stream of its connection on the response's path, so that Node orders the answers.
 */
export function connectionFree(socket: Socket, responseQueued: boolean): Promise<void> | undefined {
  if (responseQueued) connectionsWithQueuedRequests.add(socket);
  return streamOfConnection.get(socket)?.whenConnectionFree();
}

/** Resolves once every stream that writes its connection itself ended. */
export async function streamsEnded(): Promise<void> {
  await Promise.all([...streamsWritingThemselves].map((sink) => sink.whenConnectionFree()));
}

/** A connection that closed is free, whatever its stream was doing (`this` is the socket). */
function freeOnClose(this: Socket): void {
  streamOfConnection.get(this)?.connectionFreed();
}

/**
 * A stream's response over HTTP/1.1 with chunked encoding, which keeps only its socket once the
 * head is out, so that an idle stream holds no request or response objects. The head is written
 * through Node; then Node's bookkeeping of the exchange is ended as if the response were complete
 * (its `end` writes nothing, the chunked encoding being taken over), so Node and fastify let go of
 * the request, the response and their listeners, and the stream writes every chunk, the last one
 * included, to the socket itself. The keep-alive timer Node then starts is held off while the
 * stream lasts and started again once it ended, so a connection is reused or closed as before; a
 * request sent on the connection meanwhile is answered after the stream's last chunk (D47).
 */
export class Http1StreamSink implements StreamSink {
  private response: ServerResponse | undefined;
  private socket: Socket | undefined;
  private chosenWriter: FrameWriter | undefined;
  private ended = false;
  private readonly goneListeners: (() => void)[] = [];
  /** What waits for the stream to leave its connection (`whenConnectionFree`). */
  private connectionWaiters: (() => void)[] | undefined;

  constructor(
    response: ServerResponse,
    private readonly corsHeaders: Readonly<Record<string, string>> | undefined,
  ) {
    this.response = response;
  }

  get heldBytes(): number {
    return this.socket ? this.socket.writableLength : (this.response?.writableLength ?? 0);
  }

  get writable(): boolean {
    if (this.ended) return false;
    if (this.socket) return !this.socket.destroyed;
    const response = this.response;
    return response !== undefined && !response.destroyed && !response.writableEnded;
  }

  open(status: number, headers: Readonly<Record<string, string>>): void {
    const response = this.response as ServerResponse;
    response.writeHead(status, this.corsHeaders === undefined ? headers : withCorsHeaders(headers, this.corsHeaders));
    response.flushHeaders();
    const socket = response.socket;
    if (!canWriteItself(response, socket)) return;
    this.chosenWriter = frameWriterFor(response);
    this.detach(response, socket);
  }

  writer(): FrameWriter | undefined {
    if (!this.chosenWriter && this.response?.headersSent) this.chosenWriter = frameWriterFor(this.response);
    return this.chosenWriter;
  }

  end(last: string, closeConnection: boolean, end: EndListener): void {
    this.ended = true;
    const { socket } = this;
    if (!socket) {
      this.endThroughResponse(last, closeConnection, end);
      return;
    }
    if (socket.destroyed) {
      this.connectionFreed();
      end.settled();
      return;
    }
    const data = last === '' ? LAST_CHUNK : Buffer.concat([chunkOf(last), LAST_CHUNK]);
    if (closeConnection) {
      socket.once('close', () => end.settled());
      writeAfterFrames(socket, data, () => {
        end.handedOver();
        // FIN after the data; the descriptor stays open until the client closes its side, so the
        // kernel keeps delivering what it holds for as long as the client reads.
        if (!socket.destroyed) socket.end();
      });
      return;
    }
    // Listened to before the write, which may complete at once; taken back after it, since the
    // connection may carry many more requests.
    const settleOnClose = (): void => end.settled();
    socket.once('close', settleOnClose);
    writeAfterFrames(socket, data, () => {
      socket.removeListener('close', settleOnClose);
      // The connection is idle again: Node's keep-alive timer closes it unless a request comes.
      const keepAliveMs = (socket as Socket & { server?: { keepAliveTimeout?: number } }).server?.keepAliveTimeout ?? 0;
      if (!socket.destroyed) socket.setTimeout(keepAliveMs);
      this.connectionFreed();
      end.settled();
    });
  }

  reset(): void {
    if (this.socket) resetSocket(this.socket);
    else if (this.response?.socket) resetSocket(this.response.socket);
  }

  onClientGone(listener: () => void): () => void {
    const { socket, response } = this;
    if (socket) {
      if (socket.destroyed) {
        queueMicrotask(listener);
        return () => undefined;
      }
      socket.once('close', listener);
      return () => socket.removeListener('close', listener);
    }
    const connection = response?.socket ?? response?.req.socket;
    if (!response || !connection || connection.destroyed) {
      queueMicrotask(listener);
      return () => undefined;
    }
    // Until the head is out the response says when the client leaves; from then on its socket.
    this.goneListeners.push(listener);
    response.once('close', listener);
    return () => {
      const index = this.goneListeners.indexOf(listener);
      if (index >= 0) this.goneListeners.splice(index, 1);
      this.response?.removeListener('close', listener);
      this.socket?.removeListener('close', listener);
    };
  }

  /** Resolves once the stream no longer writes its connection. */
  whenConnectionFree(): Promise<void> {
    if (!streamsWritingThemselves.has(this)) return Promise.resolve();
    return new Promise((resolve) => (this.connectionWaiters ??= []).push(resolve));
  }

  /** The stream wrote its last chunk, or its connection closed: what waited for it goes on. */
  connectionFreed(): void {
    if (!streamsWritingThemselves.delete(this)) return;
    if (this.socket && streamOfConnection.get(this.socket) === this) streamOfConnection.delete(this.socket);
    const waiters = this.connectionWaiters;
    this.connectionWaiters = undefined;
    for (const resume of waiters ?? []) resume();
  }

  /**
   * Ends Node's side of the exchange without ending the body: `end` with the chunked encoding
   * taken away writes nothing, and its `finish` has Node and fastify release the request and the
   * response. The client-gone listeners move to the socket, whose keep-alive timer is held off.
   */
  private detach(response: ServerResponse, socket: Socket): void {
    this.socket = socket;
    streamOfConnection.set(socket, this);
    streamsWritingThemselves.add(this);
    if (!socket.listeners('close').includes(freeOnClose)) socket.on('close', freeOnClose);
    for (const listener of this.goneListeners.splice(0)) {
      response.removeListener('close', listener);
      socket.once('close', listener);
    }
    response.once('finish', () => {
      // Node started the keep-alive timer of an idle connection: this one is not idle.
      if (!socket.destroyed) socket.setTimeout(0);
    });
    response.chunkedEncoding = false;
    response.end();
    this.response = undefined;
  }

  private endThroughResponse(last: string, closeConnection: boolean, end: EndListener): void {
    const response = this.response;
    if (!response) {
      end.settled();
      return;
    }
    response.end(last);
    const socket = response.socket ?? response.req.socket;
    if (closeConnection && socket) {
      socket.once('close', () => end.settled());
      response.once('finish', () => {
        end.handedOver();
        if (!socket.destroyed) socket.end();
      });
      return;
    }
    response.once('finish', () => end.settled());
    response.once('close', () => end.settled());
  }
}

/** Whether a stream can write `socket` itself once its head went out through `response`. */
function canWriteItself(response: ServerResponse, socket: Socket | null): socket is Socket {
  // A request injected without a connection (tests) has a stand-in socket: nothing to keep there.
  if (!(socket instanceof Socket) || socket.destroyed) return false;
  // A TLS connection's bytes cannot go straight to the descriptor, and its secure context
  // outweighs what the response holds: such a stream keeps its response.
  if (socket instanceof TLSSocket) return false;
  // Node orders the answers of pipelined requests only while it holds their responses.
  if (connectionsWithQueuedRequests.has(socket)) return false;
  // A response that closes its connection (`Connection: close`, HTTP/1.0) would have Node close
  // it at the early `finish`.
  return response.chunkedEncoding && response.shouldKeepAlive;
}

/** The stream's headers with the CORS policy's in place of `Access-Control-Allow-Origin: *`. */
export function withCorsHeaders(headers: Readonly<Record<string, string>>, cors: Readonly<Record<string, string>>): Record<string, string> {
  const { 'access-control-allow-origin': _anyOrigin, ...rest } = headers;
  return { ...rest, ...cors };
}
