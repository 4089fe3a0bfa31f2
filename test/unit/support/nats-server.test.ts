import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import {
  findFreePort,
  locateNatsServer,
  probeNats,
  requireSharedNats,
  startNatsServer,
  type NatsServerProcess,
} from '../../support/nats-server.js';

const started: NatsServerProcess[] = [];

async function start(options?: Parameters<typeof startNatsServer>[0]): Promise<NatsServerProcess> {
  const server = await startNatsServer(options);
  started.push(server);
  return server;
}

afterEach(async () => {
  for (const server of started.splice(0)) await server.stop();
});

/** Connects, runs `body`, and always closes the connection. */
async function withConnection<T>(url: string, body: (nc: Awaited<ReturnType<typeof connect>>) => Promise<T>): Promise<T> {
  const nc = await connect({ servers: url, reconnect: false });
  try {
    return await body(nc);
  } finally {
    await nc.close();
  }
}

async function storeOneMessage(url: string, stream: string, text: string): Promise<number> {
  return withConnection(url, async (nc) => {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: stream, subjects: [`${stream.toLowerCase()}.>`] });
    const ack = await jetstream(nc).publish(`${stream.toLowerCase()}.a`, text);
    return ack.seq;
  });
}

async function readMessage(url: string, stream: string, seq: number): Promise<string | undefined> {
  return withConnection(url, async (nc) => {
    const jsm = await jetstreamManager(nc);
    const message = await jsm.streams.getMessage(stream, { seq });
    return message?.string();
  });
}

describe('startNatsServer', () => {
  it('starts a JetStream-enabled server on a free port with a temporary store', async () => {
    const server = await start();
    expect(server.url).toBe(`nats://127.0.0.1:${server.port}`);
    expect(existsSync(server.storeDir)).toBe(true);
    const info = await probeNats('127.0.0.1', server.port);
    expect(info.jetstream).toBe(true);
    const account = await withConnection(server.url, async (nc) => (await jetstreamManager(nc)).getAccountInfo());
    expect(account.streams).toBe(0);
  });

  it('uses the port and store directory it is given', async () => {
    const port = await findFreePort();
    const storeDir = mkdtempSync(join(tmpdir(), 'aviso-nats-given-'));
    try {
      const server = await start({ port, storeDir });
      expect(server.port).toBe(port);
      expect(server.storeDir).toBe(storeDir);
      await server.stop();
      expect(existsSync(storeDir)).toBe(true);
    } finally {
      rmSync(storeDir, { recursive: true, force: true });
    }
  });

  it('stop closes the port and removes the temporary store', async () => {
    const server = await start();
    await server.stop();
    await expect(probeNats('127.0.0.1', server.port, 500)).rejects.toThrow();
    expect(existsSync(server.storeDir)).toBe(false);
  });

  it('stop is idempotent', async () => {
    const server = await start();
    await server.stop();
    await expect(server.stop()).resolves.toBeUndefined();
  });

  it('restart keeps the port and the JetStream data', async () => {
    const server = await start();
    const seq = await storeOneMessage(server.url, 'SURVIVES_RESTART', 'kept');
    await server.restart();
    expect(server.url).toBe(`nats://127.0.0.1:${server.port}`);
    expect(await readMessage(server.url, 'SURVIVES_RESTART', seq)).toBe('kept');
  });

  it('restart after kill recovers the JetStream data', async () => {
    const server = await start();
    const seq = await storeOneMessage(server.url, 'SURVIVES_CRASH', 'kept after crash');
    await server.kill();
    await expect(probeNats('127.0.0.1', server.port, 500)).rejects.toThrow();
    await server.restart();
    expect(await readMessage(server.url, 'SURVIVES_CRASH', seq)).toBe('kept after crash');
  });

  it('fails with the server output when the port is taken', async () => {
    const server = await start();
    await expect(startNatsServer({ port: server.port })).rejects.toThrow(/nats-server exited .*address already in use/s);
  });
});

describe('locateNatsServer', () => {
  it('says how to install nats-server when it is nowhere to be found', () => {
    expect(() => locateNatsServer('', ['/nonexistent/nats-server'])).toThrow(/apt-get install nats-server.*npm test/);
  });

  it('finds the binary on PATH or at the Debian location', () => {
    expect(locateNatsServer()).toMatch(/nats-server$/);
  });
});

describe('requireSharedNats', () => {
  it('fails loudly, saying how to start NATS, when nothing listens at the URL', async () => {
    const port = await findFreePort();
    const failure = requireSharedNats(`nats://127.0.0.1:${port}`);
    await expect(failure).rejects.toThrow(`NATS with JetStream must be running at nats://127.0.0.1:${port}`);
    await expect(failure).rejects.toThrow(/`nats-server -js`.*`npm test`/);
  });

  it('accepts a server that answers with JetStream enabled', async () => {
    const server = await start();
    await expect(requireSharedNats(server.url)).resolves.toBeUndefined();
  });
});
