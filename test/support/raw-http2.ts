import { connect as connectTls, type TLSSocket } from 'node:tls';

/** Frame types and flags of RFC 9113 §6 that these tests send or look for. */
const FRAME = { HEADERS: 0x1, SETTINGS: 0x4, GOAWAY: 0x7, CONTINUATION: 0x9 } as const;
const FLAG = { ACK: 0x1, END_STREAM: 0x1, END_HEADERS: 0x4 } as const;
const CLIENT_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

function frame(type: number, flags: number, streamId: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(streamId, 5);
  return Buffer.concat([head, payload]);
}

/** An HPACK integer with an `prefixBits`-bit prefix (RFC 7541 §5.1) after the pattern `first`. */
function hpackInteger(first: number, prefixBits: number, value: number): Buffer {
  const max = (1 << prefixBits) - 1;
  if (value < max) return Buffer.from([first | value]);
  const bytes = [first | max];
  let rest = value - max;
  while (rest >= 128) {
    bytes.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

/** A header field "literal without indexing" (RFC 7541 §6.2.2) whose name is static table entry `nameIndex`. */
function literalIndexedName(nameIndex: number, value: string): Buffer {
  return Buffer.concat([hpackInteger(0x00, 4, nameIndex), hpackInteger(0x00, 7, value.length), Buffer.from(value, 'latin1')]);
}

/**
 * An HTTP/2 connection over TLS driven frame by frame, for what no HTTP/2 client library sends:
 * a header block that never ends, a connection that never sends a request. It acknowledges the
 * server's SETTINGS, never answers a PING (as a client in the middle of a header block cannot),
 * and records the GOAWAY it receives.
 */
export class RawHttp2Connection {
  /** The error code of the server's last GOAWAY, if one came. */
  goawayCode: number | undefined;
  /** Set when the server closed the connection. */
  readonly closed: Promise<void>;
  private received = Buffer.alloc(0);
  private drip: NodeJS.Timeout | undefined;
  private dripLeft = 0;

  private constructor(private readonly socket: TLSSocket) {
    socket.on('data', (data: Buffer) => this.read(data));
    socket.on('error', () => undefined);
    this.closed = new Promise((resolve) =>
      socket.once('close', () => {
        clearTimeout(this.drip);
        resolve();
      }),
    );
  }

  /** Connects with ALPN `h2` and sends the client preface (the magic and an empty SETTINGS frame). */
  static async open(port: number, ca: Buffer): Promise<RawHttp2Connection> {
    const socket = connectTls({ host: '127.0.0.1', port, ca, servername: 'localhost', ALPNProtocols: ['h2'] });
    await new Promise<void>((resolve, reject) => {
      socket.once('secureConnect', resolve);
      socket.once('error', reject);
    });
    if (socket.alpnProtocol !== 'h2') throw new Error(`ALPN negotiated ${String(socket.alpnProtocol)}, not h2`);
    socket.write(Buffer.concat([CLIENT_PREFACE, frame(FRAME.SETTINGS, 0, 0, Buffer.alloc(0))]));
    return new RawHttp2Connection(socket);
  }

  /** How many bytes of the last `startEndlessHead` were still to be sent (when the connection closed, if it has). */
  get bytesLeftToDrip(): number {
    return this.dripLeft;
  }

  /**
   * Starts a POST to `path` on stream 1 whose header block never ends: a HEADERS frame without
   * END_HEADERS carrying the pseudo-headers, then a CONTINUATION frame announcing 16,000 bytes of
   * one more header field, whose bytes are sent one every `gapMs` (over 25 minutes at 100 ms).
   */
  startEndlessHead(path: string, gapMs: number): void {
    const pseudo = Buffer.concat([
      Buffer.from([0x83, 0x87]), // :method POST, :scheme https (static table 3 and 7)
      literalIndexedName(4, path), // :path
      literalIndexedName(1, 'localhost'), // :authority
    ]);
    this.socket.write(frame(FRAME.HEADERS, FLAG.END_STREAM, 1, pseudo));
    const name = Buffer.from('x-endless', 'latin1');
    const valueLength = 16_000;
    const fieldHead = Buffer.concat([Buffer.from([0x00]), hpackInteger(0x00, 7, name.length), name, hpackInteger(0x00, 7, valueLength)]);
    const continuation = frame(FRAME.CONTINUATION, FLAG.END_HEADERS, 1, Buffer.alloc(fieldHead.length + valueLength, 'a'));
    fieldHead.copy(continuation, 9);
    // The frame header and the field's name go at once; the value a byte at a time.
    const atOnce = 9 + fieldHead.length;
    this.socket.write(continuation.subarray(0, atOnce));
    let offset = atOnce;
    this.dripLeft = continuation.length - offset;
    const next = (): void => {
      if (this.socket.destroyed || this.dripLeft === 0) return;
      this.socket.write(continuation.subarray(offset, offset + 1));
      offset++;
      this.dripLeft--;
      this.drip = setTimeout(next, gapMs);
    };
    this.drip = setTimeout(next, gapMs);
  }

  close(): void {
    clearTimeout(this.drip);
    this.socket.destroy();
  }

  private read(data: Buffer): void {
    this.received = Buffer.concat([this.received, data]);
    while (this.received.length >= 9) {
      const length = this.received.readUIntBE(0, 3);
      if (this.received.length < 9 + length) return;
      const [type, flags] = [this.received[3], this.received[4] ?? 0];
      const payload = this.received.subarray(9, 9 + length);
      this.received = this.received.subarray(9 + length);
      if (type === FRAME.SETTINGS && (flags & FLAG.ACK) === 0 && !this.socket.destroyed) {
        this.socket.write(frame(FRAME.SETTINGS, FLAG.ACK, 0, Buffer.alloc(0)));
      }
      if (type === FRAME.GOAWAY && payload.length >= 8) this.goawayCode = payload.readUInt32BE(4);
    }
  }
}
