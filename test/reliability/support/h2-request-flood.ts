import { connect as connectTls, type TLSSocket } from 'node:tls';
import { Flag, FrameType, NEWEST_DYNAMIC_ENTRY, frame, hpack } from './raw-h2.js';

/**
 * Many small HTTP/2 GET requests as cheaply as a client can send them, for floods of requests
 * the server answers at once (a `400`): a few TLS connections, each with up to
 * `streamsPerConnection` requests in flight, frames built once and reused. One field (a header, or
 * the path) is sent in full on each connection's first request and then named by its HPACK
 * dynamic table index (one byte), as any HTTP/2 client does with a field that repeats: a 4 KB
 * field costs the sender a few bytes per request. What comes back is parsed frame by frame and only counted (the answer's size per
 * stream, the largest kept), so 60,000 answers cost the test no memory.
 */

export interface RequestFloodOptions {
  readonly port: number;
  /** The request's path and query; sent once in full, then by index, unless there is a `repeatedHeader`. */
  readonly path: string;
  /**
   * A header field sent once in full, then by index (the path is then sent in full each time).
   * The indexed field must fit HPACK's 4,096-byte dynamic table: name and value plus 32 bytes.
   */
  readonly repeatedHeader?: { readonly name: string; readonly value: string };
  readonly requests: number;
  readonly connections: number;
  /** Below the server's SETTINGS_MAX_CONCURRENT_STREAMS (256). */
  readonly streamsPerConnection: number;
}

export interface RequestFloodResult {
  /** Requests whose answer ended (END_STREAM), or that the server reset. */
  readonly answered: number;
  readonly resets: number;
  /** Bytes of answer bodies (DATA payloads), all streams together. */
  readonly bodyBytes: number;
  readonly largestBody: number;
  /** Bytes the client wrote for its requests (header blocks and frame heads). */
  readonly requestBytes: number;
  /** The first answer's body, to check what the server said. */
  readonly sampleBody: string;
}

/** Sends `requests` GET requests over `connections` HTTP/2 connections and resolves once every one is answered. */
export async function floodRequests(options: RequestFloodOptions): Promise<RequestFloodResult> {
  const perConnection = Math.ceil(options.requests / options.connections);
  const results = await Promise.all(
    Array.from({ length: options.connections }, (_, index) =>
      FloodConnection.run(options, Math.min(perConnection, options.requests - index * perConnection)),
    ),
  );
  return {
    answered: results.reduce((sum, r) => sum + r.answered, 0),
    resets: results.reduce((sum, r) => sum + r.resets, 0),
    bodyBytes: results.reduce((sum, r) => sum + r.bodyBytes, 0),
    largestBody: Math.max(...results.map((r) => r.largestBody)),
    requestBytes: results.reduce((sum, r) => sum + r.requestBytes, 0),
    sampleBody: results.find((r) => r.sampleBody !== '')?.sampleBody ?? '',
  };
}

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
/** Credit for the server's answers: no stream of the flood ever waits for flow control. */
const LARGE_WINDOW = 2 ** 31 - 1;

class FloodConnection {
  private pending: Buffer = Buffer.alloc(0);
  private nextStreamId = 1;
  private sent = 0;
  private inFlight = 0;
  private readonly bodySizes = new Map<number, number>();
  private readonly result = { answered: 0, resets: 0, bodyBytes: 0, largestBody: 0, requestBytes: 0, sampleBody: '' };
  private sampleChunks: Buffer[] | undefined = [];
  private sampleStream = 1;
  private readonly firstBlock: Buffer;
  private readonly laterBlock: Buffer;

  private constructor(
    private readonly socket: TLSSocket,
    private readonly options: RequestFloodOptions,
    private readonly count: number,
    private readonly done: (error?: Error) => void,
  ) {
    const repeated = options.repeatedHeader ?? { name: ':path', value: options.path };
    if (repeated.name.length + repeated.value.length + 32 > 4096)
      throw new Error('the repeated field does not fit the HPACK dynamic table');
    const head = (path: Buffer): Buffer[] => [hpack.indexed(2), hpack.indexed(7), path, hpack.literalWithIndexedName(1, 'localhost')];
    if (options.repeatedHeader) {
      const path = hpack.literalWithIndexedName(4, options.path);
      this.firstBlock = Buffer.concat([...head(path), hpack.insert(repeated.name, repeated.value)]);
      this.laterBlock = Buffer.concat([...head(path), hpack.indexed(NEWEST_DYNAMIC_ENTRY)]);
    } else {
      this.firstBlock = Buffer.concat(head(hpack.insert(':path', options.path)));
      this.laterBlock = Buffer.concat(head(hpack.indexed(NEWEST_DYNAMIC_ENTRY)));
    }
  }

  static run(options: RequestFloodOptions, count: number): Promise<RequestFloodResult> {
    return new Promise((resolve, reject) => {
      const socket = connectTls({
        host: '127.0.0.1',
        port: options.port,
        servername: 'localhost',
        rejectUnauthorized: false,
        ALPNProtocols: ['h2'],
      });
      let settled = false;
      const done = (error?: Error): void => {
        if (settled) return;
        settled = true;
        socket.destroy();
        if (error) reject(error);
        else resolve(connection.result);
      };
      const connection = new FloodConnection(socket, options, count, done);
      socket.on('error', (error) => done(error));
      socket.on('close', () => done(new Error(`the server closed the connection after ${connection.result.answered} answers`)));
      socket.on('data', (chunk: Buffer) => connection.received(chunk));
      socket.once('secureConnect', () => connection.start());
    });
  }

  private start(): void {
    if (this.socket.alpnProtocol !== 'h2') return this.done(new Error(`ALPN chose ${String(this.socket.alpnProtocol)}, not h2`));
    const window = Buffer.alloc(4);
    window.writeUInt32BE(LARGE_WINDOW - 65_535);
    const settings = Buffer.alloc(6);
    settings.writeUInt16BE(SETTINGS_INITIAL_WINDOW_SIZE, 0);
    settings.writeUInt32BE(LARGE_WINDOW, 2);
    this.write([PREFACE, frame(FrameType.SETTINGS, 0, 0, settings), frame(FrameType.WINDOW_UPDATE, 0, 0, window)]);
    if (this.count === 0) return this.done();
    this.sendMore();
  }

  private sendMore(): void {
    const frames: Buffer[] = [];
    while (this.sent < this.count && this.inFlight < this.options.streamsPerConnection) {
      const streamId = this.nextStreamId;
      this.nextStreamId += 2;
      this.sent++;
      this.inFlight++;
      this.bodySizes.set(streamId, 0);
      frames.push(
        frame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, streamId, streamId === 1 ? this.firstBlock : this.laterBlock),
      );
    }
    if (frames.length > 0) this.write(frames);
  }

  private write(frames: Buffer[]): void {
    const bytes = Buffer.concat(frames);
    this.result.requestBytes += bytes.length;
    this.socket.write(bytes);
  }

  private received(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let offset = 0;
    while (this.pending.length - offset >= 9) {
      const length = this.pending.readUIntBE(offset, 3);
      if (this.pending.length - offset < 9 + length) break;
      const type = this.pending[offset + 3] as number;
      const flags = this.pending[offset + 4] as number;
      const streamId = this.pending.readUInt32BE(offset + 5) & 0x7fffffff;
      this.onFrame(type, flags, streamId, this.pending.subarray(offset + 9, offset + 9 + length));
      offset += 9 + length;
    }
    this.pending = this.pending.subarray(offset);
    if (this.result.answered + this.result.resets === this.count) this.done();
    else this.sendMore();
  }

  private onFrame(type: number, flags: number, streamId: number, payload: Buffer): void {
    if (type === FrameType.SETTINGS && !(flags & Flag.ACK)) this.write([frame(FrameType.SETTINGS, Flag.ACK, 0)]);
    if (type === FrameType.GOAWAY) this.done(new Error(`GOAWAY ${payload.readUInt32BE(4)} after ${this.result.answered} answers`));
    if (type === FrameType.RST_STREAM) {
      this.finish(streamId);
      this.result.resets++;
      return;
    }
    if (type === FrameType.DATA) {
      this.bodySizes.set(streamId, (this.bodySizes.get(streamId) ?? 0) + payload.length);
      this.result.bodyBytes += payload.length;
      if (streamId === this.sampleStream) this.sampleChunks?.push(Buffer.from(payload));
    }
    if ((type === FrameType.DATA || type === FrameType.HEADERS) && flags & Flag.END_STREAM) {
      this.result.largestBody = Math.max(this.result.largestBody, this.bodySizes.get(streamId) ?? 0);
      this.finish(streamId);
      this.result.answered++;
      if (streamId === this.sampleStream && this.sampleChunks) {
        this.result.sampleBody = Buffer.concat(this.sampleChunks).toString('utf8');
        this.sampleChunks = undefined;
      }
    }
  }

  private finish(streamId: number): void {
    if (this.bodySizes.delete(streamId)) this.inFlight--;
  }
}
