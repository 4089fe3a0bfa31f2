import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import type { AutocannonOptions, AutocannonResult } from './autocannon-run.js';
import { reply, runWorker, workerOptions } from './worker-side.js';

/**
 * The HTTP load generator in its own process: autocannon's API, a warm-up run, then the measured
 * run, whose numbers go back to the bench.
 */
/** A start of its own per process, so one run's topics are not another's (a purge between runs would make them stale). */
const runPrefix = randomUUID().slice(0, 8);
let counter = 0;

/** The request with what `options` asks to vary on each one. */
function varied(options: AutocannonOptions, request: autocannon.Request): autocannon.Request {
  let next = request;
  if (options.freshHeader !== undefined) next = { ...next, headers: { ...next.headers, [options.freshHeader]: randomUUID() } };
  if (options.distinctTopics) next = { ...next, body: options.body.replace(/"stream":"[^"]*"/, `"stream":"s${runPrefix}x${counter++}"`) };
  return next;
}

function run(options: AutocannonOptions, durationSeconds: number): Promise<autocannon.Result> {
  return autocannon({
    url: options.url,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: options.body,
    connections: options.connections,
    duration: durationSeconds,
    ...(options.freshHeader !== undefined || options.distinctTopics
      ? { requests: [{ setupRequest: (request: autocannon.Request) => varied(options, request) }] }
      : {}),
  });
}

runWorker(async () => {
  const options = workerOptions<AutocannonOptions>();
  if (options.warmupSeconds > 0) await run(options, options.warmupSeconds);
  const result = await run(options, options.durationSeconds);
  const message: AutocannonResult = {
    type: 'result',
    requestsPerSecond: result['2xx'] / result.duration,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    durationSeconds: result.duration,
  };
  reply(message);
});
