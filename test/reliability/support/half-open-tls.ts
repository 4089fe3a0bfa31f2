import { connect as connectTcp, createServer, type AddressInfo, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';

/**
 * TLS handshakes that are begun and never finished: a raw TCP socket sends a real ClientHello
 * (recorded from Node's own TLS client, offering `h2`) and then nothing, so the server answers
 * with its ServerHello and certificate and keeps the handshake state until its handshake timeout.
 */

/** The first TLS record Node's client sends (its ClientHello), captured on a local listener. */
export async function captureClientHello(): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const listener = createServer((socket) => {
      let received = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        // A TLS record: type, version (2 bytes), length (2 bytes), then the body.
        if (received.length >= 5 && received.length >= 5 + received.readUInt16BE(3)) {
          socket.destroy();
          listener.close();
          resolve(received.subarray(0, 5 + received.readUInt16BE(3)));
        }
      });
    });
    listener.once('error', reject);
    listener.listen(0, '127.0.0.1', () => {
      const { port } = listener.address() as AddressInfo;
      const client = connectTls({ host: '127.0.0.1', port, servername: 'localhost', ALPNProtocols: ['h2'], rejectUnauthorized: false });
      client.on('error', () => undefined);
    });
  });
}

/** One begun handshake: `answered` once the server sent its first bytes, `closed` once the socket is gone. */
export interface HalfOpenHandshake {
  readonly socket: Socket;
  answered: boolean;
  closed: boolean;
}

export class HalfOpenHandshakes {
  readonly handshakes: HalfOpenHandshake[] = [];

  constructor(
    private readonly port: number,
    private readonly clientHello: Buffer,
  ) {}

  /**
   * Begins `count` handshakes, `batch` at a time, each waited for until the server answered or
   * closed it (a batch at a time keeps the listen backlog from overflowing into SYN retries).
   */
  async begin(count: number, batch = 200): Promise<void> {
    for (let started = 0; started < count; started += batch) {
      const size = Math.min(batch, count - started);
      await Promise.all(Array.from({ length: size }, () => this.beginOne()));
    }
  }

  get answered(): number {
    return this.handshakes.filter((handshake) => handshake.answered).length;
  }

  /** Sockets the server closed without sending a byte (refused by `max_connections`). */
  get refused(): number {
    return this.handshakes.filter((handshake) => handshake.closed && !handshake.answered).length;
  }

  get open(): number {
    return this.handshakes.filter((handshake) => !handshake.closed).length;
  }

  destroyAll(): void {
    for (const handshake of this.handshakes) handshake.socket.destroy();
  }

  private beginOne(): Promise<void> {
    return new Promise((resolve) => {
      const socket = connectTcp(this.port, '127.0.0.1');
      const handshake: HalfOpenHandshake = { socket, answered: false, closed: false };
      this.handshakes.push(handshake);
      socket.on('error', () => undefined);
      socket.once('connect', () => socket.write(this.clientHello));
      socket.once('data', () => {
        handshake.answered = true;
        resolve();
      });
      // Data beyond the server's first flight is never read into anything.
      socket.on('data', () => undefined);
      socket.once('close', () => {
        handshake.closed = true;
        resolve();
      });
    });
  }
}
