import { setTimeout as delay } from 'node:timers/promises';
import { connect, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import { NatsUnavailableError, errorText } from './nats-errors.js';

/** Connection settings of `notification_backend.jetstream` (docs/design/rules/backends.md §7.2). */
export interface NatsLinkSettings {
  readonly url: string;
  readonly token: string | undefined;
  readonly connectTimeoutMs: number;
  readonly startupAttempts: number;
  readonly reconnectDelayMs: number;
  /** 0 = unlimited; a positive value gives up for good once exhausted (docs/design/rules/reference-0.13.md §6). */
  readonly maxReconnectAttempts: number;
}

export interface NatsClients {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
}

class NatsConnectError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NatsConnectError';
  }
}

/**
 * Owns the NATS connection: startup attempts and the client's own reconnects. With unlimited
 * reconnects (`max_reconnect_attempts: 0`) losing NATS never needs a process restart: should the
 * client still close the connection, a fresh one is made as soon as NATS answers again. A positive
 * `max_reconnect_attempts` is an operator's explicit bound, as in aviso-server 0.13: once the client
 * has used it up the link stays down for good, every request fails at once and `/ready` answers
 * 503 until the process is restarted. While disconnected the backend fails fast.
 */
export class NatsLink {
  private current: NatsClients | undefined;
  /**
   * The client lost its server and is reconnecting. Requests made now would wait for their full
   * timeout (and a publish could even be sent once the connection is back, after notify answered
   * 500), so operations fail at once instead.
   */
  private disconnected = false;
  private closing = false;
  private readonly lostListeners = new Set<(error: Error) => void>();
  private readonly reconnectListeners = new Set<() => void>();
  private readonly errorListeners = new Set<(error: Error) => boolean>();

  private constructor(
    private readonly settings: NatsLinkSettings,
    private readonly logger: Logger,
  ) {}

  /** Connects with `retry_attempts` attempts `reconnect_delay_ms` apart; rejects with `NATS connect failed: …`. */
  static async open(settings: NatsLinkSettings, logger: Logger): Promise<NatsLink> {
    const link = new NatsLink(settings, logger);
    let lastError: unknown;
    for (let attempt = 1; attempt <= settings.startupAttempts; attempt++) {
      try {
        link.adopt(await link.connectOnce());
        return link;
      } catch (error) {
        lastError = error;
        logger.warn(
          { event_name: 'backend.jetstream.connect.failed', attempt, attempts: settings.startupAttempts, error: errorText(error) },
          'NATS connect attempt failed',
        );
        if (attempt < settings.startupAttempts) await delay(settings.reconnectDelayMs);
      }
    }
    throw new NatsConnectError(`NATS connect failed: ${errorText(lastError)}`);
  }

  get serverVersion(): string {
    return this.current?.nc.info?.version ?? '0.0.0';
  }

  /** The live clients, or `NatsUnavailableError` while there is no connection to a server. */
  clients(): NatsClients {
    if (!this.current) throw new NatsUnavailableError();
    if (this.disconnected) throw new NatsUnavailableError('NATS connection is not available: reconnecting');
    return this.current;
  }

  /**
   * Connected to a server right now (D26): false while the client is reconnecting and once it gave
   * up. A plain read of state the status watcher keeps, so a readiness probe costs nothing.
   */
  get isConnected(): boolean {
    return this.current !== undefined && !this.disconnected && !this.current.nc.isClosed();
  }

  /** Called when the connection closed for good (the client stopped reconnecting). */
  onLost(listener: (error: Error) => void): void {
    this.lostListeners.add(listener);
  }

  /** Called each time the client got its connection back (to the same or another server). */
  onReconnected(listener: () => void): () => void {
    this.reconnectListeners.add(listener);
    return () => this.reconnectListeners.delete(listener);
  }

  /**
   * Called with each error the server reports on the connection (a permission violation, for
   * one); a listener returns true when it has dealt with the error, which is then not logged here.
   */
  onError(listener: (error: Error) => boolean): void {
    this.errorListeners.add(listener);
  }

  async close(): Promise<void> {
    this.closing = true;
    const current = this.current;
    this.current = undefined;
    if (current && !current.nc.isClosed()) {
      try {
        await current.nc.flush();
        await current.nc.drain();
      } catch (error) {
        this.logger.warn({ event_name: 'backend.jetstream.drain.failed', error: errorText(error) }, 'NATS drain failed');
      }
    }
  }

  private async connectOnce(): Promise<NatsClients> {
    const { settings } = this;
    const options: ConnectionOptions = {
      servers: natsServers(settings.url),
      name: 'aviso-ts',
      timeout: settings.connectTimeoutMs,
      reconnect: true,
      maxReconnectAttempts: settings.maxReconnectAttempts === 0 ? -1 : settings.maxReconnectAttempts,
      reconnectTimeWait: settings.reconnectDelayMs,
      ...(settings.token !== undefined ? { token: settings.token } : {}),
    };
    const nc = await connect(options);
    try {
      // Fails when JetStream is not enabled for the account (docs/design/rules/backends.md §7.2).
      const jsm = await jetstreamManager(nc);
      return { nc, js: jetstream(nc), jsm };
    } catch (error) {
      await nc.close();
      throw error;
    }
  }

  private adopt(clients: NatsClients): void {
    this.current = clients;
    this.disconnected = false;
    this.logger.info(
      {
        event_name: 'backend.jetstream.connected',
        server_version: clients.nc.info?.version,
        nats_auth: this.settings.token !== undefined ? 'token' : 'none',
      },
      'Connected to NATS',
    );
    void this.watchStatus(clients.nc);
    void clients.nc.closed().then((error) => this.onClosed(clients, error));
  }

  private async watchStatus(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (this.current?.nc === nc) {
        if (status.type === 'disconnect') this.disconnected = true;
        else if (status.type === 'reconnect') {
          this.disconnected = false;
          for (const listener of this.reconnectListeners) listener();
        }
      }
      if (status.type === 'error' && [...this.errorListeners].some((listener) => listener(status.error))) continue;
      if (status.type === 'disconnect' || status.type === 'error') {
        this.logger.warn({ event_name: `backend.jetstream.${status.type}` }, `NATS ${status.type}`);
      } else if (status.type === 'reconnect') {
        this.logger.info({ event_name: 'backend.jetstream.reconnected' }, 'NATS reconnected');
      }
    }
  }

  private onClosed(clients: NatsClients, error: Error | void): void {
    if (this.current !== clients || this.closing) return;
    this.current = undefined;
    const reason = error ? errorText(error) : 'connection closed';
    const givenUp = this.settings.maxReconnectAttempts > 0;
    this.logger.error(
      { event_name: 'backend.jetstream.connection.lost', error: reason, max_reconnect_attempts: this.settings.maxReconnectAttempts },
      givenUp
        ? `NATS connection lost for good: max_reconnect_attempts (${this.settings.maxReconnectAttempts}) exhausted; restart the process once NATS is back`
        : 'NATS connection lost',
    );
    for (const listener of this.lostListeners) listener(new NatsUnavailableError(`NATS connection lost: ${reason}`));
    if (!givenUp) void this.reestablish();
  }

  private async reestablish(): Promise<void> {
    while (!this.closing && !this.current) {
      await delay(this.settings.reconnectDelayMs);
      if (this.closing) return;
      try {
        const clients = await this.connectOnce();
        if (this.closing) {
          await clients.nc.close();
          return;
        }
        this.adopt(clients);
      } catch (error) {
        this.logger.debug({ event_name: 'backend.jetstream.reconnect.failed', error: errorText(error) }, 'NATS still away');
      }
    }
  }
}

/**
 * `nats_url` may list several servers separated by commas (`nats://a:4222,nats://b:4222`), so a
 * cluster stays reachable when the first one is down at startup. The client also learns the
 * cluster's other members from the server it connects to.
 */
export function natsServers(url: string): string[] {
  const servers = url
    .split(',')
    .map((server) => server.trim())
    .filter((server) => server !== '');
  // Nothing but commas: hand the text over as it is, so the connect error names it.
  return servers.length > 0 ? servers : [url];
}
