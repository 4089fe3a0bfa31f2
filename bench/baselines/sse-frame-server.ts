import { createServer, type ServerResponse } from 'node:http';
import { fanoutCloudEvent } from '../support/notifications.js';
import { atFixedRate } from '../support/rate-schedule.js';
import type { ReadyMessage } from '../support/ready.js';
import { epochMs } from '../support/stats.js';
import { onCommand, reply, runWorker } from '../support/worker-side.js';

/**
 * Baseline of `fanout` and `idle_watchers`, in its own process: a bare node:http server that
 * answers any POST with an SSE response, writes an opening frame and a heartbeat like aviso's, keeps
 * the response, and on command writes preformatted notification frames (aviso's CloudEvent shape,
 * send time in the payload) to every open response at a fixed rate. No parsing, filtering or
 * queueing: the ceiling of SSE fan-out on this machine.
 */
export interface BroadcastCommand {
  readonly type: 'broadcast';
  readonly count: number;
  /** Frames sent first, at the same rate, with negative indices (not counted by the fleet). */
  readonly warmup: number;
  readonly ratePerSecond: number;
  /** The index of the first counted frame (0 when absent): a capacity search's steps continue the numbering. */
  readonly firstIndex?: number;
}

export interface BroadcastDone {
  readonly type: 'broadcast_done';
  readonly firstSendMs: number;
  readonly lastSendMs: number;
  readonly clients: number;
}

const HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'access-control-allow-origin': '*',
  'x-accel-buffering': 'no',
};

function openingFrames(): string {
  const timestamp = new Date().toISOString().slice(0, 19) + 'Z';
  return (
    `event: live-notification\ndata: {"connection_will_close_in_seconds":3600,"request_id":"${crypto.randomUUID()}","timestamp":"${timestamp}","topic":"extreme_event.north.1200.*.*","type":"connection_established"}\n\n` +
    `event: heartbeat\ndata: {"timestamp":"${timestamp}","topic":"extreme_event.north.1200.*.*"}\n\n`
  );
}

runWorker(async () => {
  const clients = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, HEADERS);
      res.write(openingFrames());
      clients.add(res);
      res.once('close', () => clients.delete(res));
    });
  });
  server.requestTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', 511, resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');

  onCommand<BroadcastCommand>(async (command) => {
    if (command.type !== 'broadcast') return;
    const sentTimes = await atFixedRate(command.warmup + command.count, command.ratePerSecond, async (slot) => {
      const sentMs = epochMs();
      const index = slot < command.warmup ? slot - command.warmup : slot - command.warmup + (command.firstIndex ?? 0);
      const frame = `event: live-notification\ndata: ${fanoutCloudEvent(index, sentMs)}\n\n`;
      for (const client of clients) client.write(frame);
      return sentMs;
    });
    sentTimes.splice(0, command.warmup);
    const done: BroadcastDone = {
      type: 'broadcast_done',
      firstSendMs: sentTimes[0] ?? Number.NaN,
      lastSendMs: sentTimes[sentTimes.length - 1] ?? Number.NaN,
      clients: clients.size,
    };
    reply(done);
  });
  const ready: ReadyMessage = { type: 'ready', port: address.port };
  reply(ready);
});
