import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FrameWriter } from '../streaming/stream-sink.js';

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
  constructor(private readonly socket: Socket) {}

  get pendingBytes(): number {
    return this.socket.writableLength;
  }

  writeAll(frames: readonly (string | Buffer)[], written: () => void): void {
    const { socket } = this;
    const last = frames.length - 1;
    if (last === 0) {
      socket.write(chunkOf(frames[0] as string | Buffer), written);
      return;
    }
    // Corked, the frames leave in one writev, each chunk as it is (no copy).
    socket.cork();
    for (let i = 0; i <= last; i++) socket.write(chunkOf(frames[i] as string | Buffer), i === last ? written : undefined);
    socket.uncork();
  }

  onceDrained(listener: () => void): void {
    this.socket.once('drain', listener);
  }
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
