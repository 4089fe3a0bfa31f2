import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { useBackend } from '../support/backends.js';
import { startServer } from '../support/server-process.js';
import { SseClient } from '../support/sse-client.js';
import { framesWithoutHeartbeats as frames, historyLabel } from '../support/stream-frames.js';

/**
 * What the real server says of history a stream cannot deliver, on JetStream (the in-memory
 * cases are in unit/streaming/history-gap-stream): a stream deleted and created again under its
 * clients restarts the numbering, which a watch from an old cursor is told (`sequence_reset`, D41)
 * and then replays; a stream keeping one notification per topic says a superseded one
 * (`history_gap`, D42) to a replay and to a watch's replay phase.
 */

const identifier = (step: number) => ({
  class: 'od',
  expver: '1',
  domain: 'g',
  date: '20250706',
  time: '1200',
  stream: 'enfo',
  step: String(step),
});

async function notify(url: string, step: number): Promise<number> {
  const response = await fetch(`${url}/api/v1/notification`, {
    method: 'POST',
    body: JSON.stringify({ event_type: 'mars', identifier: identifier(step), payload: `step ${step}` }),
  });
  expect(response.status).toBe(200);
  return step;
}

describe('a JetStream stream created anew under its clients', () => {
  const backend = useBackend('jetstream');

  it('a stream created anew under a watch from an old cursor: sequence_reset, then the new numbering, then live', async () => {
    const server = await startServer({ config: backend.config() });
    try {
      for (const step of [1, 2, 3]) await notify(server.url, step);
      const nc = await connect({ servers: backend.natsUrl });
      try {
        await (await jetstreamManager(nc)).streams.delete('MARS');
      } finally {
        await nc.close();
      }
      // The next notify finds the stream gone and creates it: its numbering starts at 1 again.
      await notify(server.url, 4);
      const watch = await SseClient.open(`${server.url}/api/v1/watch`, { event_type: 'mars', identifier: { class: 'od' }, from_id: '4' });
      try {
        expect(watch.status).toBe(200);
        const opening = await frames(watch, 4);
        await notify(server.url, 5);
        const live = await frames(watch, 1);
        expect([...opening, ...live].map(historyLabel)).toEqual([
          'replay_started',
          'sequence_reset',
          'replay mars@1',
          'replay_completed',
          'live-notification mars@2',
        ]);
        expect(opening[1]?.json).toMatchObject({ requested_sequence: 4, last_sequence: 1 });
        await server.waitForLog('stream.cursor.beyond_end', { from: 0 });
      } finally {
        watch.close();
      }
    } finally {
      await server.stop();
    }
  });
});

describe('a JetStream stream keeping one notification per topic', () => {
  const backend = useBackend('jetstream');

  it('one notification per topic: a replay and a watch from before a superseded one are told', async () => {
    const config = backend.config();
    const schemas = config.notification_schema as Record<string, Record<string, unknown>>;
    // Back to the default retention: the latest notification of each identifier only.
    const { storage_policy: _kept, ...mars } = schemas.mars as Record<string, unknown>;
    const server = await startServer({ config: { ...config, notification_schema: { ...schemas, mars } } });
    try {
      for (const step of [1, 1, 2]) await notify(server.url, step);
      const replay = await SseClient.open(`${server.url}/api/v1/replay`, {
        event_type: 'mars',
        identifier: { class: 'od', step: 1 },
        from_id: '1',
      });
      try {
        const seen = await frames(replay, 5);
        expect(seen.map(historyLabel)).toEqual([
          'replay_started',
          'gap 1-1 lost=null request',
          'replay mars@2',
          'replay_completed',
          'close end_of_stream',
        ]);
        expect(seen[1]?.json).toMatchObject({ first_sequence: 1, last_sequence: 1, lost: null, scope: 'request' });
      } finally {
        replay.close();
      }
      const watch = await SseClient.open(`${server.url}/api/v1/watch`, { event_type: 'mars', identifier: { class: 'od' }, from_id: '1' });
      try {
        expect((await frames(watch, 5)).map(historyLabel)).toEqual([
          'replay_started',
          'gap 1-1 lost=null request',
          'replay mars@2',
          'replay mars@3',
          'replay_completed',
        ]);
      } finally {
        watch.close();
      }
      await server.waitForLog('stream.history.gap', { from: 0 });
    } finally {
      await server.stop();
    }
  });
});
