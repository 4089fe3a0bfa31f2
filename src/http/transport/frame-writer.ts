import { writeSync, writevSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { useWriteTurn } from '../../streaming/flush-turn.js';
import type { FrameWriter, WriteTurn } from '../../streaming/stream-sink.js';

/**
 * How a stream's frames reach its socket (docs/architecture.md "Live dispatch", "Writing frames").
 * Over HTTP/1.1 with chunked encoding — every stream of an HTTP/1.1 client — frames are written
 * straight to the socket as ready-made chunks: a frame that goes to a thousand watchers is framed
 * once (its chunk is cached with it) and each socket gets one write of those bytes, where the
 * response's own `write` would build the chunk header and three writes per socket. Frames written
 * together go out in one system call. Anything else (HTTP/2, an HTTP/1.0 client, a response not yet
 * on its socket) writes through the response.
 *
 * This is the writer for a response whose head was just sent.
 */
export function frameWriterFor(response: ServerResponse): FrameWriter {
  const socket = response.socket;
  if (response.req.httpVersionMajor === 1 && response.chunkedEncoding && socket && response.headersSent && response.writableLength === 0) {
    return new ChunkedSocketWriter(socket);
  }
  return new ResponseWriter(response);
}

class ChunkedSocketWriter implements FrameWriter {
  /** The socket's descriptor for writing straight to the kernel; -1 when it cannot be (TLS, no handle). */
  private readonly fd: number;

  constructor(private readonly socket: Socket) {
    this.fd = plainDescriptor(socket);
  }

  get pendingBytes(): number {
    return this.socket.writableLength;
  }

  /**
   * While Node holds nothing for the socket, the chunks go straight to the kernel with one
   * `write`/`writev` system call on its descriptor, and `written` is told at once: a fan-out to
   * thousands of sockets then costs the system call and little else, without Node's per-write
   * request, callback and tick. What the kernel does not take (its buffer is full), and everything
   * while Node still holds bytes (so the order stays), goes through the socket as before.
   */
  writeAll(frames: readonly (string | Buffer)[], written: () => void): void {
    const { socket } = this;
    const chunks = frames.length === 1 ? [chunkOf(frames[0] as string | Buffer)] : frames.map(chunkOf);
    if (this.fd >= 0 && socket.writableLength === 0 && !socket.destroyed) {
      if (gathering) {
        gathered.push({ socket, fd: this.fd, chunks, written });
        return;
      }
      const taken = writeToKernel(this.fd, chunks);
      if (taken !== undefined) {
        const rest = remainderAfter(chunks, taken);
        if (rest.length === 0) {
          written();
          return;
        }
        writeThroughSocket(socket, rest, written);
        return;
      }
    }
    writeThroughSocket(socket, chunks, written);
  }

  onceDrained(listener: () => void): void {
    this.socket.once('drain', listener);
  }
}

/** Writes the chunks through Node, after whatever it holds for the socket. */
function writeThroughSocket(socket: Socket, chunks: readonly Buffer[], written: () => void): void {
  const last = chunks.length - 1;
  if (last === 0) {
    socket.write(chunks[0] as Buffer, written);
    return;
  }
  // Corked, the chunks leave in one writev, each as it is (no copy).
  socket.cork();
  for (let i = 0; i <= last; i++) socket.write(chunks[i] as Buffer, i === last ? written : undefined);
  socket.uncork();
}

/** One socket's chunks of one flush, written together (one `writev` for several). */
interface GatheredWrite {
  readonly socket: Socket;
  readonly fd: number;
  readonly chunks: readonly Buffer[];
  readonly written: () => void;
}

/** Set during a flush turn: direct writes are gathered and made together when it ends. */
let gathering = false;
let gathered: GatheredWrite[] = [];
let taken = new Int32Array(1024);

/**
 * A flush turn's direct writes, made back to back when the turn ends, their completions after:
 * the kernel's write path then stays warm from one socket to the next instead of running between
 * the stream logic of every socket. A socket whose write the kernel does not take whole gets the
 * rest, and its following writes of the turn, through Node, in order. Nothing writes to those
 * sockets in between: the turn's only writes are its connections' flushes.
 */
const kernelWriteTurn: WriteTurn = {
  begin() {
    gathering = true;
  },
  end() {
    gathering = false;
    if (gathered.length > 0) writeGathered();
  },
};
useWriteTurn(kernelWriteTurn);

function writeGathered(): void {
  const writes = gathered;
  gathered = [];
  if (taken.length < writes.length) taken = new Int32Array(writes.length * 2);
  // A socket whose write the kernel did not take whole gets no more kernel writes this turn.
  let stopped: Set<Socket> | undefined;
  for (let i = 0; i < writes.length; i++) {
    const write = writes[i] as GatheredWrite;
    if (stopped?.has(write.socket)) {
      taken[i] = 0;
      continue;
    }
    const bytes = writeToKernel(write.fd, write.chunks) ?? 0;
    taken[i] = bytes;
    if (bytes !== byteLengthOf(write.chunks)) (stopped ??= new Set()).add(write.socket);
  }
  for (let i = 0; i < writes.length; i++) {
    const write = writes[i] as GatheredWrite;
    const bytes = taken[i] as number;
    if (bytes === byteLengthOf(write.chunks)) {
      write.written();
      continue;
    }
    // What the kernel did not take goes through Node, in order, with the rest of the turn's writes.
    writeThroughSocket(write.socket, bytes > 0 ? remainderAfter(write.chunks, bytes) : write.chunks, write.written);
  }
}

function byteLengthOf(chunks: readonly Buffer[]): number {
  if (chunks.length === 1) return (chunks[0] as Buffer).length;
  let bytes = 0;
  for (const chunk of chunks) bytes += chunk.length;
  return bytes;
}

/**
 * Writes bytes that are already HTTP framing (a response's last chunk) after everything written to
 * the socket before them, gathered ones of the current turn included.
 */
export function writeAfterFrames(socket: Socket, data: Buffer, written: () => void): void {
  const fd = gathering ? plainDescriptor(socket) : -1;
  if (fd >= 0 && socket.writableLength === 0) gathered.push({ socket, fd, chunks: [data], written });
  else socket.write(data, written);
}

/**
 * The descriptor of a plain TCP socket (libuv keeps it non-blocking), or -1: a TLS socket's bytes
 * must go through TLS, and a socket without a handle has none.
 */
function plainDescriptor(socket: Socket): number {
  if ((socket as Socket & { encrypted?: boolean }).encrypted) return -1;
  const fd = (socket as Socket & { _handle?: { fd?: unknown } })._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : -1;
}

/**
 * Bytes the kernel took of `chunks` (0 when its buffer is full), or undefined when the descriptor
 * cannot be written (the client is gone): the socket then finds out by itself.
 */
function writeToKernel(fd: number, chunks: readonly Buffer[]): number | undefined {
  try {
    return chunks.length === 1 ? writeSync(fd, chunks[0] as Buffer) : writevSync(fd, chunks);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'EAGAIN' || code === 'EWOULDBLOCK' ? 0 : undefined;
  }
}

/** What is left of `chunks` after the first `taken` bytes. */
function remainderAfter(chunks: readonly Buffer[], taken: number): readonly Buffer[] {
  const rest: Buffer[] = [];
  let skip = taken;
  for (const chunk of chunks) {
    if (skip >= chunk.length) {
      skip -= chunk.length;
      continue;
    }
    rest.push(skip === 0 ? chunk : chunk.subarray(skip));
    skip = 0;
  }
  return rest;
}

class ResponseWriter implements FrameWriter {
  constructor(private readonly response: ServerResponse) {}

  get pendingBytes(): number {
    return this.response.writableLength;
  }

  writeAll(frames: readonly (string | Buffer)[], written: () => void): void {
    // One write, one HTTP/2 DATA frame (or HTTP/1.1 chunk) for all of them.
    this.response.write(frames.length === 1 ? (frames[0] as string | Buffer) : joined(frames), written);
  }

  onceDrained(listener: () => void): void {
    this.response.once('drain', listener);
  }
}

function joined(frames: readonly (string | Buffer)[]): Buffer {
  return Buffer.concat(frames.map((frame) => (typeof frame === 'string' ? Buffer.from(frame, 'utf8') : frame)));
}

/**
 * A frame as one HTTP/1.1 chunk. A Buffer frame is shared by every watcher of its notification, so
 * its chunk is made once: the last one is kept at hand (a fan-out asks for the same frame socket
 * after socket), the others with their frame while it lives.
 */
const chunks = new WeakMap<Buffer, Buffer>();
let lastFrame: Buffer | undefined;
let lastChunk: Buffer | undefined;

export function chunkOf(frame: string | Buffer): Buffer {
  if (typeof frame === 'string') return chunkBytes(Buffer.from(frame, 'utf8'));
  if (frame === lastFrame) return lastChunk as Buffer;
  let chunk = chunks.get(frame);
  if (!chunk) {
    chunk = chunkBytes(frame);
    chunks.set(frame, chunk);
  }
  lastFrame = frame;
  lastChunk = chunk;
  return chunk;
}

const NO_BYTES = Buffer.alloc(0);

function chunkBytes(data: Buffer): Buffer {
  // A chunk of length 0 is the end of the response: an empty frame writes nothing instead.
  if (data.length === 0) return NO_BYTES;
  const head = `${data.length.toString(16)}\r\n`;
  const chunk = Buffer.allocUnsafe(head.length + data.length + 2);
  chunk.write(head, 0, 'latin1');
  data.copy(chunk, head.length);
  chunk.write('\r\n', head.length + data.length, 'latin1');
  return chunk;
}
