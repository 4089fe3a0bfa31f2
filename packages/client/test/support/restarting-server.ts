import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serverConfig } from '../../../../test/support/schemas.js';
import { startServer, type RunningServer } from '../../../../test/support/server-process.js';
import { AvisoClient } from '../../src/index.js';
import { FaultProxy } from './fault-proxy.js';

/** The issue-30 recipe's event type: `job` with a `name` and a `step`, neither required, so `{}` watches everything. */
export const JOB_SCHEMA = {
  job: {
    topic: { base: 'job', key_order: ['name', 'step'] },
    identifier: {
      name: { type: 'StringHandler', required: false },
      step: { type: 'IntHandler', required: false },
    },
    payload: { required: false },
  },
};

/**
 * The real in-memory server, restarted on the same port with the same `state_directory` (a
 * temporary directory both processes share, as `./state` is for `npm start` run twice in one
 * place), behind a proxy that clients connect through. While a restart is under way the proxy
 * answers new connections `503` with `Retry-After: 1`, so a test decides what happens before a
 * client reconnects (it still reconnects by itself); publishing goes to the server directly.
 */
/** One server process with the shared state directory, on `port` (a free one when 0). */
async function launch(inMemory: Record<string, unknown>, stateDirectory: string, port: number): Promise<RunningServer> {
  const config = serverConfig({
    notification_backend: { kind: 'in_memory', in_memory: { max_history_per_topic: 100, ...inMemory, state_directory: stateDirectory } },
    notification_schema: JOB_SCHEMA,
  });
  return startServer({ config, ...(port === 0 ? {} : { port }) });
}

export class RestartingServer {
  private publisher: AvisoClient | undefined;
  private steps = 0;

  private constructor(
    private readonly inMemory: Record<string, unknown>,
    private readonly stateDirectory: string,
    private server: RunningServer | undefined,
    readonly proxy: FaultProxy,
  ) {
    this.publisher = server && new AvisoClient({ baseUrl: server.url });
  }

  /** `inMemory`: settings of `notification_backend.in_memory` beside the shared `state_directory`. */
  static async start(inMemory: Record<string, unknown> = {}): Promise<RestartingServer> {
    const stateDirectory = mkdtempSync(join(tmpdir(), 'aviso-recipe-state-'));
    const server = await launch(inMemory, stateDirectory, 0);
    return new RestartingServer(inMemory, stateDirectory, server, await FaultProxy.start(server.port));
  }

  /** What clients use: the proxy in front of the server. */
  get url(): string {
    return this.proxy.url;
  }

  /** The running server process (its logs). */
  get current(): RunningServer {
    if (!this.server) throw new Error('the server is not running');
    return this.server;
  }

  /** Publishes `count` notifications of `job` for `name`, with steps counting on across calls. */
  async publish(count: number, name = 'a'): Promise<void> {
    if (!this.publisher) throw new Error('the server is not running');
    for (let i = 0; i < count; i++) {
      this.steps += 1;
      await this.publisher.notify({ eventType: 'job', identifier: { name, step: String(this.steps) }, payload: { step: this.steps } });
    }
  }

  /** Publishes the last published step of `name` once more: the same topic, a new notification. */
  async publishAgain(name = 'a'): Promise<void> {
    if (!this.publisher) throw new Error('the server is not running');
    await this.publisher.notify({
      eventType: 'job',
      identifier: { name, step: String(this.steps) },
      payload: { step: this.steps, again: true },
    });
  }

  /**
   * Stops the server with `signal` and starts it again on the same port; `beforeReconnect` runs
   * once the new process listens and before any client can reach it.
   */
  async restart(signal: 'SIGTERM' | 'SIGKILL', beforeReconnect: () => Promise<void> = async () => undefined): Promise<void> {
    this.proxy.setMode({ kind: 'status', status: 503, retryAfter: '1' });
    const port = this.current.port;
    await this.shutdown(signal);
    this.server = await launch(this.inMemory, this.stateDirectory, port);
    this.publisher = new AvisoClient({ baseUrl: this.server.url });
    await beforeReconnect();
    this.proxy.setMode({ kind: 'forward' });
  }

  async stop(): Promise<void> {
    await this.proxy.close();
    await this.shutdown('SIGKILL');
    rmSync(this.stateDirectory, { recursive: true, force: true });
  }

  private async shutdown(signal: NodeJS.Signals): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await this.publisher?.close();
    this.publisher = undefined;
    await server?.stop(signal);
  }
}
