import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy between a client and a server that injects the faults of docs/design/rules/client.md §6: drop every
 * open connection, stall (stop forwarding server bytes while the sockets stay open), truncate the
 * server's bytes in the middle of a frame, black-hole new connections (accepted, never answered),
 * and answer new connections itself with `503` and a `Retry-After`. Faults are switched by the
 * test; bytes pass through unchanged otherwise.
 */
export type NewConnectionMode =
  | { readonly kind: 'forward' }
  | { readonly kind: 'blackhole' }
  | { readonly kind: 'refuse' }
  | { readonly kind: 'status'; readonly status: number; readonly retryAfter?: string };

interface Pair {
  readonly client: Socket;
  upstream: Socket | undefined;
  stalled: boolean;
  readonly held: Buffer[];
}

export class FaultProxy {
  private readonly server: Server;
  private readonly pairs = new Set<Pair>();
  private mode: NewConnectionMode = { kind: 'forward' };
  private truncateMarker: string | undefined;
  private waiters: Array<() => void> = [];
  /** Connections accepted so far (every mode counts). */
  accepted = 0;

  private constructor(private readonly upstreamPort: number) {
    this.server = createServer((socket) => this.accept(socket));
  }

  static async start(upstreamPort: number): Promise<FaultProxy> {
    const proxy = new FaultProxy(upstreamPort);
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/`;
  }

  /** How connections accepted from now on are treated. */
  setMode(mode: NewConnectionMode): void {
    this.mode = mode;
  }

  /** Destroys every open connection on both sides (a lost connection). */
  drop(): void {
    for (const pair of this.pairs) this.destroy(pair);
  }

  /** Stops forwarding server bytes on every open connection; the sockets stay open. */
  stall(): void {
    for (const pair of this.pairs) pair.stalled = true;
  }

  /**
   * The next server chunk holding `marker` is cut inside it: the bytes before the marker's
   * middle are forwarded, then both sides are destroyed, so the client sees half a frame.
   */
  truncateAt(marker: string): void {
    this.truncateMarker = marker;
  }

  /** Resolves once `count` connections in total were accepted. */
  async waitForConnections(count: number): Promise<void> {
    while (this.accepted < count) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  async close(): Promise<void> {
    this.drop();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    this.accepted++;
    for (const wake of this.waiters.splice(0)) wake();
    const pair: Pair = { client, upstream: undefined, stalled: false, held: [] };
    this.pairs.add(pair);
    client.on('error', () => this.destroy(pair));
    client.on('close', () => this.destroy(pair));
    const mode = this.mode;
    if (mode.kind === 'refuse') {
      this.destroy(pair);
      return;
    }
    if (mode.kind === 'blackhole') {
      client.resume();
      return;
    }
    if (mode.kind === 'status') {
      client.once('data', () => {
        const headers = [`HTTP/1.1 ${mode.status} Injected`, 'content-length: 0', 'connection: close'];
        if (mode.retryAfter !== undefined) headers.push(`retry-after: ${mode.retryAfter}`);
        client.end(`${headers.join('\r\n')}\r\n\r\n`);
      });
      return;
    }
    const upstream = connect(this.upstreamPort, '127.0.0.1');
    pair.upstream = upstream;
    upstream.on('error', () => this.destroy(pair));
    upstream.on('close', () => this.destroy(pair));
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => this.forward(pair, chunk));
  }

  private forward(pair: Pair, chunk: Buffer): void {
    if (pair.stalled) return;
    const marker = this.truncateMarker;
    if (marker !== undefined) {
      const at = chunk.indexOf(marker);
      if (at >= 0) {
        this.truncateMarker = undefined;
        pair.client.write(chunk.subarray(0, at + Math.floor(marker.length / 2)), () => this.destroy(pair));
        pair.stalled = true;
        return;
      }
    }
    pair.client.write(chunk);
  }

  private destroy(pair: Pair): void {
    if (!this.pairs.delete(pair)) return;
    pair.client.destroy();
    pair.upstream?.destroy();
  }
}
