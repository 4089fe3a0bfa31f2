import { createServer } from 'node:net';

/** A port nobody listens on right now (the kernel's choice for an ephemeral listener). */
export async function findFreePort(): Promise<number> {
  return new Promise<number>((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('could not read the port of an ephemeral listener'));
        return;
      }
      server.close(() => resolvePort(address.port));
    });
  });
}
