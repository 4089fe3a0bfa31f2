import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { reapOnExit } from '../../support/child-reaper.js';
import { findFreePort, locateNatsServer, probeNats, startNatsServer, type NatsServerProcess } from '../../support/nats-server.js';
import { ensureNats } from '../../support/shared-nats-setup.js';

const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function waitForNats(port: number): Promise<void> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      await probeNats('127.0.0.1', port, 500);
      return;
    } catch (error) {
      if (attempt > 200) throw error;
      await new Promise((resolveRetry) => setTimeout(resolveRetry, 25));
    }
  }
}

describe('the shared NATS of a test run', () => {
  it('starts a private JetStream server where none answers, and its teardown stops it', async () => {
    const port = await findFreePort();
    const teardown = await ensureNats(`nats://127.0.0.1:${port}`);
    expect(teardown).toBeTypeOf('function');
    cleanups.push(async () => teardown?.());
    await expect(probeNats('127.0.0.1', port)).resolves.toMatchObject({ jetstream: true });
    await teardown?.();
    await expect(probeNats('127.0.0.1', port, 500)).rejects.toThrow();
  });

  it('uses a JetStream server that already answers, and leaves it alone', async () => {
    const existing: NatsServerProcess = await startNatsServer();
    cleanups.push(() => existing.stop());
    const before = await probeNats('127.0.0.1', existing.port);
    await expect(ensureNats(existing.url)).resolves.toBeUndefined();
    await expect(probeNats('127.0.0.1', existing.port)).resolves.toEqual(before);
  });

  it('fails the run, saying what to do, when the NATS there runs without JetStream', async () => {
    const port = await findFreePort();
    const plain = spawn(locateNatsServer(), ['-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
    reapOnExit(plain);
    cleanups.push(async () => {
      plain.kill('SIGKILL');
      if (plain.exitCode === null && plain.signalCode === null) await new Promise((resolveExit) => plain.once('exit', resolveExit));
    });
    await waitForNats(port);
    await expect(ensureNats(`nats://127.0.0.1:${port}`)).rejects.toThrow(
      /runs without JetStream; the tests need it\. Restart it with `nats-server -js`/,
    );
  });
});
