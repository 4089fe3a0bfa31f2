import http from 'node:http';
import https from 'node:https';

/**
 * One HTTP GET with the two budgets of docs/design/rules/operations.md §2.10.3: a connect budget (DNS + TCP + TLS)
 * and a total budget that also covers reading the whole body.
 *
 * Built on `node:http`/`node:https` rather than the global `fetch`: Node's `fetch` offers only a
 * whole-exchange abort signal, and a separate connect timeout needs undici's `Agent`, which Node
 * does not expose without adding the `undici` package. The socket events give the connect
 * budget directly.
 *
 * Redirects are not followed (as the auth-o-tron client does): a 3xx is the final status, so the
 * service-account credentials never travel to a host other than the configured one.
 */

export interface BoundedGetOptions {
  readonly headers: Readonly<Record<string, string>>;
  readonly connectTimeoutMs: number;
  readonly totalTimeoutMs: number;
  /** Larger bodies are not buffered; the result then has `body: undefined`. */
  readonly maxBodyBytes: number;
  readonly agents: HttpAgents;
}

export interface HttpAgents {
  readonly http: http.Agent;
  readonly https: https.Agent;
}

export interface GetResponse {
  readonly status: number;
  /** The body as UTF-8 text, or `undefined` when it exceeded `maxBodyBytes`. */
  readonly body: string | undefined;
}

export type ExchangeFailure = 'connect_timeout' | 'timeout' | 'network';

/** No usable answer: the server could not be reached in time or the connection failed. */
export class ExchangeError extends Error {
  constructor(
    readonly failure: ExchangeFailure,
    message: string,
  ) {
    super(message);
    this.name = 'ExchangeError';
  }
}

/**
 * Idle keep-alive connections are dropped after this long, below the 5 s idle timeout common to
 * Node, Apache and many proxies, so a pooled connection is not reused just as the server closes it.
 */
const IDLE_SOCKET_MS = 4_000;

export function createHttpAgents(): HttpAgents {
  return {
    http: new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
    https: new https.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
  };
}

export function boundedGet(url: URL, options: BoundedGetOptions): Promise<GetResponse> {
  return new Promise((resolve, reject) => {
    const secure = url.protocol === 'https:';
    let settled = false;
    let response: http.IncomingMessage | undefined;

    const settle = (action: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(totalTimer);
      clearTimeout(connectTimer);
      action();
    };
    const fail = (failure: ExchangeFailure, message: string): void =>
      settle(() => {
        request.destroy();
        response?.destroy();
        reject(new ExchangeError(failure, message));
      });

    const request = (secure ? https : http).request(url, {
      method: 'GET',
      headers: options.headers,
      agent: secure ? options.agents.https : options.agents.http,
    });
    const totalTimer = setTimeout(() => fail('timeout', `no complete answer within ${options.totalTimeoutMs} ms`), options.totalTimeoutMs);
    const connectTimer = setTimeout(
      () => fail('connect_timeout', `no connection within ${options.connectTimeoutMs} ms`),
      options.connectTimeoutMs,
    );

    request.on('socket', (socket) => {
      // A pooled keep-alive socket is already connected (and, for TLS, past the handshake).
      if (!socket.connecting) {
        clearTimeout(connectTimer);
        return;
      }
      // For TLS the budget includes the handshake, so wait for `secureConnect`, not `connect`.
      socket.once(secure ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
    });
    request.on('error', (error) => fail('network', error.message));
    request.on('response', (incoming) => {
      response = incoming;
      const status = incoming.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let size = 0;
      incoming.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > options.maxBodyBytes) {
          settle(() => {
            incoming.destroy();
            resolve({ status, body: undefined });
          });
          return;
        }
        chunks.push(chunk);
      });
      incoming.on('end', () => settle(() => resolve({ status, body: Buffer.concat(chunks).toString('utf8') })));
      incoming.on('error', (error) => fail('network', error.message));
      // The connection dropped mid-body without an 'error' on the message.
      incoming.on('close', () => {
        if (!incoming.complete) fail('network', 'connection closed before the body was complete');
      });
    });
    request.end();
  });
}
