import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { StreamTarget } from './pausable-stream.js';

/**
 * Publishes `count` notifications as fast as the server accepts them, from `writers` clients on
 * keep-alive connections (over TLS when the target is); `notification(i)` gives the i-th body.
 * Resolves with the number answered 200; any other answer fails the flood.
 */
export async function flood(
  target: StreamTarget,
  count: number,
  notification: (index: number) => Record<string, unknown>,
  writers = 4,
): Promise<number> {
  const post = poster(target);
  let next = 0;
  let accepted = 0;
  const writer = async (): Promise<void> => {
    while (next < count) {
      const index = next++;
      const status = await post(JSON.stringify(notification(index)));
      if (status !== 200) throw new Error(`notification ${index} answered ${status}`);
      accepted++;
    }
  };
  try {
    await Promise.all(Array.from({ length: writers }, writer));
  } finally {
    post.close();
  }
  return accepted;
}

interface Poster {
  (body: string): Promise<number>;
  close(): void;
}

function poster(target: StreamTarget): Poster {
  const url = `${target.origin}/api/v1/notification`;
  if (target.transport === 'http/1.1') {
    const post = async (body: string): Promise<number> => {
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      await response.arrayBuffer();
      return response.status;
    };
    return Object.assign(post, { close: () => undefined });
  }
  // HTTPS, HTTP/1.1 on keep-alive connections: the TLS port's writers, whatever protocol the streams use.
  const agent = new HttpsAgent({ ca: target.ca, keepAlive: true, ALPNProtocols: ['http/1.1'] });
  const { hostname, port } = new URL(url);
  const post = (body: string): Promise<number> =>
    new Promise((resolve, reject) => {
      const outgoing = httpsRequest(
        {
          host: hostname,
          port,
          path: '/api/v1/notification',
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (response) => {
          response.resume();
          response.on('end', () => resolve(response.statusCode ?? 0));
          response.on('error', reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  return Object.assign(post, { close: () => agent.destroy() });
}
