import { afterEach } from 'vitest';
import { startServer, type RunningServer, type ServerOptions } from './server-process.js';
import { SseClient } from './sse-client.js';

/** Servers and streams a test opened, closed after each test even when it failed. */
export interface TrackedProcesses {
  start: (config: Record<string, unknown>, options?: Omit<ServerOptions, 'config'>) => Promise<RunningServer>;
  open: (server: RunningServer, path: string, body: unknown) => Promise<SseClient>;
}

/** Registers the `afterEach` that closes every stream, then stops every server, the test opened. */
export function trackProcesses(): TrackedProcesses {
  const servers: RunningServer[] = [];
  const clients: SseClient[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    for (const server of servers.splice(0)) await server.stop();
  });
  return {
    async start(config, options = {}) {
      const server = await startServer({ ...options, config });
      servers.push(server);
      return server;
    },
    async open(server, path, body) {
      const client = await SseClient.open(`${server.url}${path}`, body);
      clients.push(client);
      return client;
    },
  };
}
