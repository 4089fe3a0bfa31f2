import { request } from 'node:http';
import { createParser } from 'eventsource-parser';
import { epochMs } from './stats.js';
import { reply, runWorker, workerOptions } from './worker-side.js';

/**
 * The client of `replay`, in its own process: one `POST /api/v1/replay`, read to the end,
 * counting `replay` events and checking their ids ascend.
 */
export interface ReplayReaderOptions {
  readonly origin: string;
  readonly body: string;
}

export interface ReplayReaderResult {
  readonly type: 'result';
  readonly status: number;
  readonly events: number;
  /** From sending the request to the end of the response. */
  readonly elapsedMs: number;
  readonly firstEventMs: number;
  /** `replay-control` types in order (replay_started, replay_completed, notification_replay_limit_reached). */
  readonly controls: readonly string[];
  readonly closeReason: string | undefined;
  readonly errorFrames: number;
  /** Events whose sequence did not ascend. */
  readonly outOfOrder: number;
}

const ID_PATTERN = /"id":"[^"@]*@(\d+)"/;

runWorker(async () => {
  const options = workerOptions<ReplayReaderOptions>();
  const origin = new URL(options.origin);
  const started = epochMs();
  let events = 0;
  let firstEventMs = Number.NaN;
  const controls: string[] = [];
  let closeReason: string | undefined;
  let errorFrames = 0;
  let outOfOrder = 0;
  let lastSequence = 0;
  const parser = createParser({
    onEvent(message) {
      switch (message.event) {
        case 'replay': {
          if (events++ === 0) firstEventMs = epochMs() - started;
          const sequence = Number(ID_PATTERN.exec(message.data)?.[1] ?? Number.NaN);
          if (!(sequence > lastSequence)) outOfOrder++;
          lastSequence = sequence;
          return;
        }
        case 'replay-control':
          controls.push(/"type":"([^"]*)"/.exec(message.data)?.[1] ?? 'unreadable');
          return;
        case 'connection-closing':
          closeReason = /"reason":"([^"]*)"/.exec(message.data)?.[1] ?? 'unreadable';
          return;
        case 'error':
          errorFrames++;
          return;
        default:
          return;
      }
    },
  });
  const status = await new Promise<number>((resolve, reject) => {
    const req = request(
      {
        host: origin.hostname,
        port: origin.port,
        path: '/api/v1/replay',
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(options.body) },
      },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => parser.feed(chunk));
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
  const result: ReplayReaderResult = {
    type: 'result',
    status,
    events,
    elapsedMs: epochMs() - started,
    firstEventMs,
    controls,
    closeReason,
    errorFrames,
    outOfOrder,
  };
  reply(result);
});
