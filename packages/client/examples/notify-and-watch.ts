/**
 * The runnable example of docs/client.md: watch live, publish a few notifications, and print them
 * as they arrive. packages/client/test/e2e/example.test.ts imports this file and runs it against
 * the real server on the shipped configuration, in memory and on JetStream.
 */
import { AvisoClient, type Notification } from '@aviso-ts/client';

export async function notifyAndWatch(baseUrl: string, count: number): Promise<Notification[]> {
  const client = new AvisoClient({ baseUrl });
  // A watch names some fields: these two select what this example publishes.
  const stream = client.watch({ eventType: 'dissemination', identifier: { destination: 'A', class: 'od' } });
  await stream.ready; // the server confirmed the watch: what is published from now on arrives

  // A notification gives every field its schema declares; config/config.yaml's `dissemination`
  // has nine and requires a payload. A different `step` makes each its own topic, which the
  // JetStream backend keeps even when a stream keeps only the latest notification per topic.
  for (let step = 0; step < count; step++) {
    await client.notify({
      eventType: 'dissemination',
      identifier: {
        destination: 'A',
        target: 'T1',
        class: 'od',
        expver: '1',
        domain: 'g',
        date: '20250706',
        time: '12:00',
        stream: 'enfo',
        step,
      },
      payload: { location: `s3://bucket/forecast-${step}.grib` },
    });
  }

  const seen: Notification[] = [];
  for await (const n of stream) {
    console.log(n.sequence, n.identifier, n.payload);
    seen.push(n);
    if (seen.length === count) break; // leaving the loop closes the stream
  }
  await client.close();
  return seen;
}
