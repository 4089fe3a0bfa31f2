import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';

/**
 * A real HTTP fake of ECPDS's destination list (docs/design/rules/operations.md §6 "Companion fake ECPDS"), on an
 * ephemeral loopback port, for the ECPDS plugin's tests.
 */

/** The service account the fake expects; tests put the same values in their `ecpds` section. */
export const ECPDS_SERVICE_ACCOUNT = { username: 'aviso-ecpds-service', password: 'Ecpds-Service-S3cret' } as const;

/** The list every `ecpds-user*` gets in the default behaviour. */
export const ECPDS_USER_DESTINATIONS = [
  { name: 'CIP', active: true },
  { name: 'FOO', active: true },
] as const;

/**
 * A list exercising every record filter: `CIP` and `FOO` count; the rest are inactive, not
 * booleans, not objects, or active without a string `name`.
 */
export const MIXED_DESTINATIONS: readonly unknown[] = [
  { name: 'CIP', type: 32, active: true },
  { name: 'FOO', type: 16, active: true },
  { name: 'BAR', type: 16, active: false },
  { name: 'OFF', active: 'true' },
  { name: 'NOFLAG' },
  'not-a-record',
  null,
  { active: true },
  { name: 42, active: true },
  { name: 'ALT', alias: 'ALIAS-1', active: true },
];

export type FakeEcpdsBehaviour =
  /** docs/design/rules/operations.md §6 directory: `ecpds-user*` → CIP/FOO, `ecpds-unavailable` → 500, anyone else → empty list. */
  | { readonly kind: 'directory' }
  /** This status with an empty body, for every authenticated request. */
  | { readonly kind: 'status'; readonly status: number }
  /** `200` with this raw body (invalid JSON, `success: "no"`, …). */
  | { readonly kind: 'body'; readonly body: string }
  /** `200` with `{"destinationList": <list>, "success": "yes"}` for every user. */
  | { readonly kind: 'list'; readonly destinationList: readonly unknown[] };

export interface ReceivedRequest {
  /** Path and query exactly as sent on the request line. */
  readonly rawUrl: string;
  readonly authorization: string | undefined;
}

export interface FakeEcpdsOptions {
  readonly username?: string;
  readonly password?: string;
  /** Serve the list under this path prefix, e.g. `/ecpds-api`; anything else is a 404. */
  readonly pathPrefix?: string;
}

export class FakeEcpds {
  behaviour: FakeEcpdsBehaviour = { kind: 'directory' };
  /** Delay before each answer, to exercise timeouts and overlapping requests. */
  delayMs = 0;
  readonly requests: ReceivedRequest[] = [];
  /** TCP connections accepted, to tell a pooled keep-alive connection from a new one. */
  connections = 0;

  private readonly server: Server;
  private readonly expectedAuthorization: string;
  private readonly listPath: string;
  private readonly callsById = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private gate: Promise<void> | undefined;
  private openGate: (() => void) | undefined;
  private callWaiters: { count: number; resolve: () => void }[] = [];
  private port: number | undefined;

  constructor(options: FakeEcpdsOptions = {}) {
    const username = options.username ?? ECPDS_SERVICE_ACCOUNT.username;
    const password = options.password ?? ECPDS_SERVICE_ACCOUNT.password;
    this.expectedAuthorization = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
    this.listPath = `${options.pathPrefix ?? ''}/ecpds/v1/destination/list`;
    this.server = createHttpServer((request, response) => void this.handle(request, response));
    this.server.on('connection', () => (this.connections += 1));
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('fake ECPDS has no TCP address');
    this.port = address.port;
    return this;
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.release();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** `http://127.0.0.1:<port>`, without the path prefix. */
  get url(): string {
    if (this.port === undefined) throw new Error('fake ECPDS is not started');
    return `http://127.0.0.1:${this.port}`;
  }

  /** List requests received for this decoded `id`, authenticated or not. */
  callsFor(id: string): number {
    return this.callsById.get(id) ?? 0;
  }

  get totalCalls(): number {
    return this.requests.length;
  }

  /** Resolves once at least `count` list requests have arrived. */
  waitForCalls(count: number): Promise<void> {
    if (this.totalCalls >= count) return Promise.resolve();
    return new Promise((resolve) => this.callWaiters.push({ count, resolve }));
  }

  /** Holds every answer until `release()`, so tests control when overlapping requests finish. */
  hold(): void {
    if (this.gate !== undefined) return;
    this.gate = new Promise((resolve) => (this.openGate = resolve));
  }

  release(): void {
    this.openGate?.();
    this.gate = undefined;
    this.openGate = undefined;
  }

  reset(): void {
    this.behaviour = { kind: 'directory' };
    this.delayMs = 0;
    this.requests.length = 0;
    this.connections = 0;
    this.callsById.clear();
    this.release();
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const rawUrl = request.url ?? '/';
    const url = new URL(rawUrl, 'http://fake.invalid');
    if (request.method !== 'GET' || url.pathname !== this.listPath) {
      response.writeHead(404).end();
      return;
    }
    // URLSearchParams decodes as a form does (`+` → space), as ECPDS would.
    const id = url.searchParams.get('id') ?? '';
    this.requests.push({ rawUrl, authorization: request.headers.authorization });
    this.callsById.set(id, this.callsFor(id) + 1);
    this.callWaiters = this.callWaiters.filter((waiter) => {
      if (this.totalCalls < waiter.count) return true;
      waiter.resolve();
      return false;
    });

    if (this.gate !== undefined) await this.gate;
    if (this.delayMs > 0) await this.sleep(this.delayMs);
    if (response.destroyed) return;

    if (request.headers.authorization !== this.expectedAuthorization) {
      response.writeHead(401).end();
      return;
    }
    const answer = this.answer(id);
    if (answer.body === undefined) response.writeHead(answer.status).end();
    else response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
  }

  private answer(id: string): { status: number; body?: string } {
    const behaviour = this.behaviour;
    switch (behaviour.kind) {
      case 'status':
        return { status: behaviour.status };
      case 'body':
        return { status: 200, body: behaviour.body };
      case 'list':
        return { status: 200, body: listBody(behaviour.destinationList) };
      case 'directory':
        if (id === 'ecpds-unavailable') return { status: 500 };
        return { status: 200, body: listBody(id.startsWith('ecpds-user') ? ECPDS_USER_DESTINATIONS : []) };
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.add(timer);
    });
  }
}

function listBody(destinationList: readonly unknown[]): string {
  return JSON.stringify({ destinationList, success: 'yes' });
}

/**
 * A TCP listener that accepts connections and never says a word. Pointed at with `https://`, a
 * client's TLS handshake never completes, which exercises the connect timeout on loopback.
 */
export class SilentListener {
  private readonly server: TcpServer = createTcpServer((socket) => this.sockets.add(socket));
  private readonly sockets = new Set<Socket>();
  private port: number | undefined;

  async start(): Promise<this> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('silent listener has no TCP address');
    this.port = address.port;
    return this;
  }

  get httpsUrl(): string {
    if (this.port === undefined) throw new Error('silent listener is not started');
    return `https://127.0.0.1:${this.port}`;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
