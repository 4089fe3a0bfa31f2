import { probeNats, SHARED_NATS_URL, startNatsServer, type NatsServerInfo } from './nats-server.js';

/**
 * Vitest global setup: the shared NATS with JetStream that the contract, e2e and reliability
 * suites use at 127.0.0.1:4222 (SHARED_NATS_URL). One that already answers there (a developer's,
 * or the machine's service) is used as it is; when nothing answers, a private `nats-server -js`
 * with a temporary store is started on that port for this run and stopped after it, so
 * `npm test` needs no NATS set up by hand. A NATS without JetStream, or a port held by something
 * else, fails the run before any test, saying what to do.
 */
export default function setup(): Promise<(() => Promise<void>) | undefined> {
  return ensureNats(SHARED_NATS_URL);
}

/** Uses the NATS at `url`, or starts a private one there; resolves with its teardown, if any. */
export async function ensureNats(url: string): Promise<(() => Promise<void>) | undefined> {
  const { hostname, port } = new URL(url);
  const portNumber = Number(port);
  const running = await probeNats(hostname, portNumber).then(
    (info): NatsServerInfo | Error => info,
    (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
  );
  if (!(running instanceof Error)) {
    if (running.jetstream) return undefined;
    throw new Error(
      `The NATS server at ${url} (version ${running.version}) runs without JetStream; the tests need it. ` +
        'Restart it with `nats-server -js`, or stop it and let `npm test` start a private one.',
    );
  }
  const server = await startNatsServer({ port: portNumber }).catch((error: unknown) => {
    throw new Error(
      `No NATS answers at ${url} (${running.message}) and a private one could not be started there: ` +
        (error instanceof Error ? error.message : String(error)),
      { cause: error },
    );
  });
  process.stdout.write(`test setup: started a private nats-server with JetStream at ${server.url} for this run\n`);
  return () => server.stop();
}
