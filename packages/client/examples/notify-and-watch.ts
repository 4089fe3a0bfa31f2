/**
 * The runnable example of docs/client.md: publish a notification, then watch from sequence 1 and
 * print what arrives. packages/client/test/e2e/example.test.ts imports this file and runs it
 * against the real in-memory server.
 */
import { AvisoClient, type Notification } from '@aviso-ts/client';

export async function notifyAndWatch(baseUrl: string, count: number): Promise<Notification[]> {
  const client = new AvisoClient({ baseUrl });
  const identifier = { destination: 'A', class: 'od' };
  for (let i = 0; i < count; i++) await client.notify({ eventType: 'dissemination', identifier, payload: { x: i } });

  // From sequence 1, then live; the stream reconnects and resumes by itself.
  const stream = client.watch({ eventType: 'dissemination', identifier, from: { fromId: 1 } });
  const seen: Notification[] = [];
  for await (const n of stream) {
    console.log(n.sequence, n.identifier, n.payload);
    seen.push(n);
    if (seen.length === count) break; // leaving the loop closes the stream
  }
  return seen;
}
