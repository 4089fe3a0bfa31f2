import { benchConfig, exampleSchema } from '../support/aviso-config.js';
import { startAviso } from '../support/aviso-process.js';
import { Fleet } from '../support/fleet.js';
import type { FleetOpenCommand } from '../support/fleet-protocol.js';
import { NCHAN_SUBSCRIBE_PATH, nchanUnavailableReason, startNchan } from '../support/nchan.js';
import { IDLE_WATCH_BODY } from '../support/notifications.js';
import { Worker } from '../support/processes.js';
import type { ReadyMessage } from '../support/ready.js';
import { settledRssBytes } from '../support/rss.js';
import type { Scenario, ScenarioContext } from '../support/scenario.js';
import { round } from '../support/stats.js';

/**
 * RSS growth per idle live watch stream: the server's VmRSS (settled) after a fleet process opened
 * N `POST /api/v1/watch` streams and each got its opening frame, minus VmRSS before, over N. Aviso
 * runs on the in-memory backend; the baseline is the bare node:http SSE server holding N
 * connections from the same fleet. Beside it, Nchan (nginx, one worker: `support/nchan.ts`) holding
 * N EventSource subscribers of its channel, master and worker RSS summed, when nginx and the module
 * are installed (`ratio_vs_nchan`). Each first opens and closes a few streams, so code loaded on
 * first use is not counted as per-stream memory.
 */
const SIZES = { full: { streams: 10_000 }, quick: { streams: 1_000 } };
const WARMUP_STREAMS = 100;
const OPEN_CONCURRENCY = 200;

interface Growth {
  readonly bytesPerStream: number;
  readonly before: number;
  readonly after: number;
  readonly openMs: number;
}

/** Where the fleet opens idle streams, and the server processes whose memory counts. */
interface IdleTarget {
  readonly origin: string;
  readonly path: string;
  readonly method: 'GET' | 'POST';
  readonly opening: 'frame' | 'comment';
  readonly pids: readonly number[];
}

/** Opens `streams` idle streams on the target and measures the RSS growth of its processes. */
async function measureGrowth(target: IdleTarget, streams: number): Promise<Growth> {
  const open = (count: number, concurrency: number): Omit<FleetOpenCommand, 'type'> => ({
    origin: target.origin,
    path: target.path,
    method: target.method,
    opening: target.opening,
    groups: [{ body: IDLE_WATCH_BODY, count }],
    concurrency,
    expectedNotifications: 0,
  });
  const warmup = await Fleet.start();
  try {
    const opened = await warmup.open(open(WARMUP_STREAMS, 50), 60_000);
    if (opened.opened !== WARMUP_STREAMS) throw new Error(`warm-up: ${opened.failed} streams failed: ${opened.failures.join('; ')}`);
  } finally {
    await warmup.stop();
  }
  const before = await settledRssBytes(target.pids);
  const fleet = await Fleet.start();
  try {
    const opened = await fleet.open(open(streams, OPEN_CONCURRENCY), 180_000);
    if (opened.opened !== streams) throw new Error(`only ${opened.opened} of ${streams} streams opened: ${opened.failures.join('; ')}`);
    const after = await settledRssBytes(target.pids);
    return { bytesPerStream: (after - before) / streams, before, after, openMs: opened.elapsedMs };
  } finally {
    await fleet.stop();
  }
}

function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}

export const idleWatchers: Scenario = {
  name: 'idle_watchers',
  target: 'ratio ≤ 2.00',
  async run(context: ScenarioContext) {
    const { streams } = context.quick ? SIZES.quick : SIZES.full;

    const aviso = await startAviso({
      config: benchConfig({ schemas: { mars: exampleSchema('mars') }, backend: { kind: 'in_memory' } }),
    });
    let measured: Growth;
    try {
      measured = await measureGrowth(
        { origin: aviso.url, path: '/api/v1/watch', method: 'POST', opening: 'frame', pids: [aviso.pid] },
        streams,
      );
    } finally {
      await aviso.stop();
    }

    const server = Worker.start('baselines/sse-frame-server', {});
    let baseline: Growth;
    try {
      const { port } = await server.next<ReadyMessage>('ready', 15_000);
      baseline = await measureGrowth(
        { origin: `http://127.0.0.1:${port}`, path: '/api/v1/watch', method: 'POST', opening: 'frame', pids: [server.pid] },
        streams,
      );
    } finally {
      await server.stop();
    }

    const nchanUnavailable = nchanUnavailableReason();
    let nchan: Growth | undefined;
    if (nchanUnavailable === undefined) {
      const nginx = await startNchan({ connections: streams + WARMUP_STREAMS });
      try {
        nchan = await measureGrowth(
          { origin: nginx.url, path: NCHAN_SUBSCRIBE_PATH, method: 'GET', opening: 'comment', pids: [nginx.masterPid, nginx.workerPid] },
          streams,
        );
      } finally {
        await nginx.stop();
      }
    }

    const ratio = measured.bytesPerStream / baseline.bytesPerStream;
    return {
      value: round(measured.bytesPerStream),
      unit: 'bytes/stream',
      baseline: round(baseline.bytesPerStream),
      ratio: round(ratio, 3),
      pass: ratio <= 2.0,
      problems: [],
      summary:
        `${streams} streams: +${mib(measured.after - measured.before)} MiB (baseline +${mib(baseline.after - baseline.before)} MiB)` +
        (nchan === undefined
          ? '; Nchan not installed'
          : `; Nchan ${round(nchan.bytesPerStream)} bytes/stream (ratio ${round(measured.bytesPerStream / nchan.bytesPerStream, 3)})`),
      extra: {
        streams,
        rss_before_bytes: measured.before,
        rss_after_bytes: measured.after,
        open_ms: round(measured.openMs),
        baseline_rss_before_bytes: baseline.before,
        baseline_rss_after_bytes: baseline.after,
        baseline_open_ms: round(baseline.openMs),
        ...(nchan === undefined
          ? { nchan_unavailable: nchanUnavailable }
          : {
              nchan_bytes_per_stream: round(nchan.bytesPerStream),
              ratio_vs_nchan: round(measured.bytesPerStream / nchan.bytesPerStream, 3),
              nchan_rss_before_bytes: nchan.before,
              nchan_rss_after_bytes: nchan.after,
              nchan_open_ms: round(nchan.openMs),
            }),
      },
    };
  },
};
