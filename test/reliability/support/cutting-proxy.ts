import { connect, createServer, type Server, type Socket } from 'node:net';
import { seededRandom } from '../../../bench/support/seeded-random.js';

/**
 * A TCP proxy in front of HTTP/1.1 servers that cuts exchanges on purpose, for the exactly-once
 * proof of notify's `Idempotency-Key` (docs/api.md "Idempotent notify"). It reads no HTTP beyond
 * where a request's head ends: HTTP/1.1 clients send the next request on a connection only after
 * the previous answer, so client bytes arriving after server bytes start a new exchange ("turn").
 *
 * Each turn goes to the next upstream in turn (a fresh upstream connection, so two servers share
 * the requests of one client connection) and meets one fate, drawn from the proxy's own seeded
 * random source:
 *
 * - `answer`: the request reaches the server whole, and as soon as the server answers, both
 *   connections are cut before a byte of the answer reaches the client (it was processed; the
 *   client cannot know);
 * - `request`: the head and half of the body reach the server, then both connections are cut (it
 *   was never processed);
 * - `pass`: everything is forwarded.
 */

export type Fate = 'pass' | 'answer' | 'request';

export interface CuttingProxyOptions {
  /** Upstream ports on 127.0.0.1, taken in turn. */
  readonly upstreams: () => readonly number[];
  readonly cutAnswers: number;
  readonly cutRequests: number;
  readonly seed?: number;
}

export interface CuttingProxy {
  readonly port: number;
  /** How many turns met each fate, and how many could not reach their upstream. */
  readonly counts: Readonly<Record<Fate | 'unreachable', number>>;
  close(): Promise<void>;
}

const HEAD_END = Buffer.from('\r\n\r\n');

export async function startCuttingProxy(options: CuttingProxyOptions): Promise<CuttingProxy> {
  const counts: Record<Fate | 'unreachable', number> = { pass: 0, answer: 0, request: 0, unreachable: 0 };
  let random = seededRandom(options.seed ?? 23);
  let next = 0;
  const fate = (): Fate => {
    const draw = random();
    if (draw < options.cutAnswers) return 'answer';
    if (draw < options.cutAnswers + options.cutRequests) return 'request';
    return 'pass';
  };
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };

  const server: Server = createServer((client) => {
    track(client);
    let upstream: Socket | undefined;
    let turnFate: Fate = 'pass';
    let answered = true;
    let pending: Buffer[] = [];
    const cut = () => {
      client.destroy();
      upstream?.destroy();
    };

    const startTurn = (): void => {
      upstream?.destroy();
      const ports = options.upstreams();
      const port = ports[next++ % ports.length] as number;
      turnFate = fate();
      counts[turnFate]++;
      answered = false;
      pending = [];
      const socket = connect({ host: '127.0.0.1', port });
      track(socket);
      upstream = socket;
      // Only the current turn's upstream speaks for the client; an earlier one was let go.
      socket.on('error', () => {
        if (socket !== upstream) return;
        if (!answered) counts.unreachable++;
        client.destroy();
      });
      socket.on('data', (chunk: Buffer) => {
        if (socket !== upstream) return;
        if (turnFate === 'answer') {
          cut();
          return;
        }
        answered = true;
        client.write(chunk);
      });
      socket.on('end', () => {
        if (socket === upstream) client.end();
      });
    };

    const forward = (chunk: Buffer): void => {
      if (turnFate !== 'request') {
        upstream?.write(chunk);
        return;
      }
      pending.push(chunk);
      const seen = Buffer.concat(pending);
      const headEnd = seen.indexOf(HEAD_END);
      if (headEnd < 0) return;
      const body = seen.length - (headEnd + HEAD_END.length);
      if (body < 2) return;
      upstream?.write(seen.subarray(0, headEnd + HEAD_END.length + Math.floor(body / 2)), () => setImmediate(cut));
    };

    client.on('data', (chunk: Buffer) => {
      if (answered) startTurn();
      forward(chunk);
    });
    client.on('end', () => upstream?.end());
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no proxy address');
  return {
    port: address.port,
    counts,
    async close() {
      random = () => 1;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
