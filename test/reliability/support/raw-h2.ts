import { connect as connectTls, type TLSSocket } from 'node:tls';
import { eventually } from '../../support/eventually.js';

/**
 * HTTP/2 spoken by hand over a TLS socket (ALPN `h2`), for suites that must send what no
 * well-behaved client sends: floods of PING, SETTINGS, empty DATA or CONTINUATION frames, streams
 * reset as soon as they are opened, header blocks that decompress to far more than they weigh. Frames
 * are built byte by byte (RFC 9113 §4.1) and header blocks with HPACK's literal and indexed
 * representations, never Huffman (RFC 7541 §6); what the server sends back is parsed into frames
 * and kept, so a test can assert the exact GOAWAY or RST_STREAM it answered with.
 */

/** Frame types (RFC 9113 §6). */
export const FrameType = {
  DATA: 0x0,
  HEADERS: 0x1,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

export const Flag = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4 } as const;

/** Error codes of GOAWAY and RST_STREAM (RFC 9113 §7). */
export const ErrorCode = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
  ENHANCE_YOUR_CALM: 0xb,
} as const;

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
/** Credit given to the server so that no stream of a test ever waits for flow control. */
const LARGE_WINDOW = 2 ** 30;

export function frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}

export function rstStream(streamId: number, code: number): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(code);
  return frame(FrameType.RST_STREAM, 0, streamId, payload);
}

/** An HPACK integer with an N-bit prefix (RFC 7541 §5.1); `first` holds the representation's pattern bits. */
function hpackInteger(value: number, prefixBits: number, first: number): Buffer {
  const limit = (1 << prefixBits) - 1;
  if (value < limit) return Buffer.from([first | value]);
  const bytes = [first | limit];
  let rest = value - limit;
  while (rest >= 128) {
    bytes.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

function hpackString(text: string): Buffer {
  const bytes = Buffer.from(text, 'latin1');
  return Buffer.concat([hpackInteger(bytes.length, 7, 0x00), bytes]);
}

/** Header field representations (RFC 7541 §6). */
export const hpack = {
  /** A field of the static (1–61) or dynamic (62…) table, by index: one byte for the whole field. */
  indexed: (index: number): Buffer => hpackInteger(index, 7, 0x80),
  /** A literal field that is not added to the dynamic table. */
  literal: (name: string, value: string): Buffer => Buffer.concat([Buffer.from([0x00]), hpackString(name), hpackString(value)]),
  /** A literal value for the name at a static table index. */
  literalWithIndexedName: (index: number, value: string): Buffer => Buffer.concat([hpackInteger(index, 4, 0x00), hpackString(value)]),
  /** A literal field added to the dynamic table, where later blocks may name it by index 62. */
  insert: (name: string, value: string): Buffer => Buffer.concat([Buffer.from([0x40]), hpackString(name), hpackString(value)]),
  /** A dynamic table size update (RFC 7541 §6.3). */
  tableSizeUpdate: (size: number): Buffer => hpackInteger(size, 5, 0x20),
};

/** Index of the most recent dynamic table entry. */
export const NEWEST_DYNAMIC_ENTRY = 62;

/** The header block of a request: the four pseudo-header fields (static table entries where there is one), then `fields`. */
export function requestHeaderBlock(method: 'GET' | 'POST', path: string, fields: readonly Buffer[] = []): Buffer {
  return Buffer.concat([
    hpack.indexed(method === 'GET' ? 2 : 3),
    hpack.indexed(7), // :scheme https
    hpack.literalWithIndexedName(4, path),
    hpack.literalWithIndexedName(1, 'localhost'),
    ...fields,
  ]);
}

/** The HEADERS frame (and DATA frame, for a body) of a whole request on `streamId`. */
export function requestFrames(
  streamId: number,
  method: 'GET' | 'POST',
  path: string,
  body?: string,
  fields: readonly Buffer[] = [],
): Buffer {
  if (body === undefined)
    return frame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, streamId, requestHeaderBlock(method, path, fields));
  const contentType = hpack.literalWithIndexedName(31, 'application/json');
  return Buffer.concat([
    frame(FrameType.HEADERS, Flag.END_HEADERS, streamId, requestHeaderBlock(method, path, [contentType, ...fields])),
    frame(FrameType.DATA, Flag.END_STREAM, streamId, Buffer.from(body)),
  ]);
}

/**
 * A header block of any size as one HEADERS frame and as many CONTINUATION frames as the server's
 * 16 KiB maximum frame size needs (RFC 9113 §4.2).
 */
export function headerFrames(streamId: number, block: Buffer, endStream = true): Buffer {
  const chunks: Buffer[] = [];
  for (let offset = 0; offset < block.length || chunks.length === 0; offset += 16_384) chunks.push(block.subarray(offset, offset + 16_384));
  return Buffer.concat(
    chunks.map((chunk, index) => {
      const last = index === chunks.length - 1 ? Flag.END_HEADERS : 0;
      if (index > 0) return frame(FrameType.CONTINUATION, last, streamId, chunk);
      return frame(FrameType.HEADERS, last | (endStream ? Flag.END_STREAM : 0), streamId, chunk);
    }),
  );
}

export interface ReceivedFrame {
  readonly type: number;
  readonly flags: number;
  readonly streamId: number;
  readonly payload: Buffer;
}

export interface Goaway {
  readonly lastStreamId: number;
  readonly errorCode: number;
}

export interface RawH2Options {
  /**
   * Acknowledge the server's SETTINGS (default). nghttp2 applies its own advertised limits only once
   * they are acknowledged, so a client that never does sees other answers.
   */
  readonly acknowledgeSettings?: boolean;
}

/** One hand-driven HTTP/2 connection: `send` writes bytes as given, `received` holds the server's frames. */
export class RawH2Connection {
  readonly received: ReceivedFrame[] = [];
  private pending = Buffer.alloc(0);
  private closedFlag = false;
  private readonly closing: Promise<void>;

  private constructor(
    private readonly socket: TLSSocket,
    private readonly acknowledgeSettings: boolean,
  ) {
    this.closing = new Promise((resolve) =>
      socket.once('close', () => {
        this.closedFlag = true;
        resolve();
      }),
    );
    socket.on('data', (chunk: Buffer) => this.parse(chunk));
  }

  /** Connects, sends the preface and SETTINGS, and resolves once the server's SETTINGS arrived (and were acknowledged). */
  static async open(port: number, { acknowledgeSettings = true }: RawH2Options = {}): Promise<RawH2Connection> {
    const socket = connectTls({ host: '127.0.0.1', port, servername: 'localhost', rejectUnauthorized: false, ALPNProtocols: ['h2'] });
    // A reset from the server is one of the outcomes under test; `closed()` reports it.
    socket.on('error', () => undefined);
    const connection = new RawH2Connection(socket, acknowledgeSettings);
    await new Promise<void>((resolve, reject) => {
      socket.once('secureConnect', resolve);
      socket.once('close', () => reject(new Error('the TLS handshake did not complete')));
    });
    if (socket.alpnProtocol !== 'h2') throw new Error(`ALPN chose ${String(socket.alpnProtocol)}, not h2`);
    const window = Buffer.alloc(4);
    window.writeUInt32BE(LARGE_WINDOW);
    const settings = Buffer.alloc(6);
    settings.writeUInt16BE(SETTINGS_INITIAL_WINDOW_SIZE, 0);
    settings.writeUInt32BE(LARGE_WINDOW, 2);
    connection.send(PREFACE, frame(FrameType.SETTINGS, 0, 0, settings), frame(FrameType.WINDOW_UPDATE, 0, 0, window));
    await connection.waitFor('the server SETTINGS', () =>
      connection.received.some((f) => f.type === FrameType.SETTINGS && !(f.flags & Flag.ACK)),
    );
    return connection;
  }

  send(...bytes: Buffer[]): void {
    if (this.socket.writable) this.socket.write(Buffer.concat(bytes));
  }

  get isClosed(): boolean {
    return this.closedFlag;
  }

  /** Resolves when the TCP connection is gone, however it ended. */
  closed(): Promise<void> {
    return this.closing;
  }

  close(): void {
    this.socket.destroy();
  }

  /** The first GOAWAY the server sent. */
  goaway(): Goaway | undefined {
    const goaway = this.received.find((f) => f.type === FrameType.GOAWAY);
    return goaway && { lastStreamId: goaway.payload.readUInt32BE(0) & 0x7fffffff, errorCode: goaway.payload.readUInt32BE(4) };
  }

  /** RST_STREAM frames of the server: stream and error code. */
  resets(): { streamId: number; errorCode: number }[] {
    return this.received
      .filter((f) => f.type === FrameType.RST_STREAM)
      .map((f) => ({ streamId: f.streamId, errorCode: f.payload.readUInt32BE(0) }));
  }

  count(type: number, flags = 0): number {
    return this.received.filter((f) => f.type === type && (f.flags & flags) === flags).length;
  }

  /** Whether the server sent response headers on `streamId`. */
  answered(streamId: number): boolean {
    return this.received.some((f) => f.type === FrameType.HEADERS && f.streamId === streamId);
  }

  /** `:status 200`: the static table's entry 8 as the first field of the response headers. */
  answeredOk(streamId: number): boolean {
    return this.received.some((f) => f.type === FrameType.HEADERS && f.streamId === streamId && f.payload[0] === 0x88);
  }

  /** The DATA bytes received on `streamId`, as text. */
  dataText(streamId: number): string {
    return Buffer.concat(this.received.filter((f) => f.type === FrameType.DATA && f.streamId === streamId).map((f) => f.payload)).toString(
      'utf8',
    );
  }

  /** Waits until `done` holds for the frames received so far; fails at once if the connection closes first. */
  async waitFor(what: string, done: () => boolean, timeoutMs = 20_000): Promise<void> {
    await eventually(
      what,
      () => {
        if (done()) return true;
        if (this.closedFlag) throw new Error(`the connection closed before ${what}`);
        return false;
      },
      { timeoutMs, intervalMs: 20 },
    );
  }

  private parse(chunk: Buffer): void {
    this.pending = Buffer.concat([this.pending, chunk]);
    while (this.pending.length >= 9) {
      const length = this.pending.readUIntBE(0, 3);
      if (this.pending.length < 9 + length) return;
      const received: ReceivedFrame = {
        type: this.pending[3] as number,
        flags: this.pending[4] as number,
        streamId: this.pending.readUInt32BE(5) & 0x7fffffff,
        payload: Buffer.from(this.pending.subarray(9, 9 + length)),
      };
      this.pending = this.pending.subarray(9 + length);
      this.received.push(received);
      if (received.type === FrameType.SETTINGS && !(received.flags & Flag.ACK) && this.acknowledgeSettings) {
        this.send(frame(FrameType.SETTINGS, Flag.ACK, 0));
      }
    }
  }
}
