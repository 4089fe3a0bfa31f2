import type { ConnectionOptions, TLSSocket } from 'node:tls';
import { Agent, buildConnector, Client, DecoratorHandler, Dispatcher } from 'undici';

/** docs/design/rules/client.md §3: watches to one server share connections, at most this many per connection. */
export const MAX_STREAMS_PER_CONNECTION = 64;

type Protocol = 'h1' | 'h2' | 'unknown';

interface Connection {
  readonly client: Client;
  protocol: Protocol;
  streams: number;
  /** Requests held while the first one learns the protocol (ALPN) of this connection. */
  readonly waiting: Array<() => void>;
}

/** undici's own forwarding handler (it calls the wrapped handler's methods on the wrapped object); its typings declare no methods. */
const Forwarding = DecoratorHandler as unknown as new (handler: Dispatcher.DispatchHandlers) => {
  onComplete(trailers: string[] | null): void;
  onError(error: Error): void;
};

/** Counts a request's stream until it completes or fails. */
class StreamHandler extends Forwarding {
  private done = false;
  constructor(
    handler: Dispatcher.DispatchHandlers,
    private readonly release: () => void,
  ) {
    super(handler);
  }
  private finish(): void {
    if (!this.done) {
      this.done = true;
      this.release();
    }
  }
  override onComplete(trailers: string[] | null): void {
    this.finish();
    super.onComplete(trailers);
  }
  override onError(error: Error): void {
    this.finish();
    super.onError(error);
  }
}

/**
 * The undici dispatcher behind the client in Node: HTTP/2 multiplexing for `https` origins, at
 * most 64 concurrent streams per connection. An SSE response holds an HTTP/1.1 connection for
 * its whole life, so sharing needs h2. undici 6 multiplexes an h2 connection only up to its
 * `pipelining` and opens a new connection for each request that arrives while one is still
 * connecting, so a burst of watches would get a connection each; here the first request to a
 * new connection learns its protocol (ALPN) while the others wait for it. An origin that answers
 * HTTP/1.1 (every `http` origin: undici speaks no cleartext h2) uses a plain pooled `Agent`,
 * one connection per open stream, where the bound of 64 holds trivially.
 */
export class SharedConnections extends Dispatcher {
  /** The HTTP/1.1 pool: every `http` origin, https origins that answer HTTP/1.1, and request/response exchanges. */
  readonly plain: Agent;
  private readonly origins = new Map<string, Connection[]>();
  private readonly http1Origins = new Set<string>();

  constructor(private readonly tls: ConnectionOptions = {}) {
    super();
    this.plain = new Agent({ connect: tls });
  }

  /** Open connections per origin, for tests and diagnostics. */
  connections(origin: string): number {
    return this.origins.get(origin)?.length ?? 0;
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandlers): boolean {
    const origin = new URL(String(options.origin)).origin;
    if (!origin.startsWith('https:') || this.http1Origins.has(origin)) return this.plain.dispatch(options, handler);
    const list = this.origins.get(origin) ?? [];
    this.origins.set(origin, list);
    const open = list.find((c) => c.protocol !== 'h1' && c.streams + c.waiting.length < MAX_STREAMS_PER_CONNECTION);
    const connection = open ?? this.open(origin, list);
    if (connection.protocol === 'unknown' && connection.streams > 0) {
      connection.waiting.push(() => this.dispatch(options, handler));
      return true;
    }
    connection.streams++;
    return connection.client.dispatch(options, new StreamHandler(handler, () => this.release(origin, connection)));
  }

  private open(origin: string, list: Connection[]): Connection {
    const base = buildConnector({ ...this.tls, allowH2: true });
    const connection: Connection = {
      client: new Client(origin, {
        allowH2: true,
        // Lets the h2 context take up to 64 streams; reset to 1 below when ALPN says HTTP/1.1.
        pipelining: MAX_STREAMS_PER_CONNECTION,
        maxConcurrentStreams: MAX_STREAMS_PER_CONNECTION,
        connect: (opts, callback) =>
          base(opts, (error, socket) => {
            if (error === null) this.learn(origin, connection, (socket as TLSSocket).alpnProtocol === 'h2' ? 'h2' : 'h1');
            else this.forget(origin, connection);
            // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- undici's callback takes (null, socket) or (error, null); the pair passed on is one of them
            callback(error, socket as never);
          }),
      }),
      protocol: 'unknown',
      streams: 0,
      waiting: [],
    };
    connection.client.on('disconnect', () => this.forget(origin, connection));
    list.push(connection);
    return connection;
  }

  private learn(origin: string, connection: Connection, protocol: Protocol): void {
    connection.protocol = protocol;
    if (protocol === 'h1') {
      connection.client.pipelining = 1;
      this.http1Origins.add(origin);
    }
    for (const resume of connection.waiting.splice(0)) resume();
  }

  /** A connection that failed or went away takes no new streams; its waiters try afresh. */
  private forget(origin: string, connection: Connection): void {
    const list = this.origins.get(origin);
    const at = list?.indexOf(connection) ?? -1;
    if (at < 0) return;
    list!.splice(at, 1);
    connection.protocol = 'h1';
    for (const resume of connection.waiting.splice(0)) resume();
  }

  private release(origin: string, connection: Connection): void {
    connection.streams--;
    // A connection left idle after its protocol turned out HTTP/1.1 is not used again.
    if (connection.streams === 0 && connection.protocol === 'h1') {
      this.forget(origin, connection);
      void connection.client.close();
    }
  }

  override async close(): Promise<void> {
    const clients = [...this.origins.values()].flat().map((c) => c.client);
    this.origins.clear();
    await Promise.all([this.plain.close(), ...clients.map((c) => c.close())]);
  }

  override async destroy(): Promise<void> {
    const clients = [...this.origins.values()].flat().map((c) => c.client);
    this.origins.clear();
    await Promise.all([this.plain.destroy(), ...clients.map((c) => c.destroy())]);
  }
}
