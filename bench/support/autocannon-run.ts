import { Worker } from './processes.js';

/** What the autocannon worker process gets as options. */
export interface AutocannonOptions {
  readonly url: string;
  readonly body: string;
  readonly connections: number;
  readonly warmupSeconds: number;
  readonly durationSeconds: number;
  /**
   * A header sent with a fresh UUID on every request: `idempotency-key` (docs/api.md "Idempotent
   * notify"), or a name the server ignores, so a baseline pays autocannon's per-request rebuild too.
   */
  readonly freshHeader?: string;
  /**
   * Every request gets a `stream` value of its own (a counter, after a prefix unique to the run), so
   * each notification has a topic of its own, as a provider announcing products has; without it
   * all requests share one topic.
   */
  readonly distinctTopics?: boolean;
}

export interface AutocannonResult {
  readonly type: 'result';
  /** 2xx responses per second of the measured run. */
  readonly requestsPerSecond: number;
  readonly ok: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly latencyP50Ms: number;
  readonly latencyP99Ms: number;
  readonly durationSeconds: number;
}

/** Runs autocannon against `url` in its own process and returns its measured run. */
export async function runAutocannon(options: AutocannonOptions): Promise<AutocannonResult> {
  const worker = Worker.start('support/autocannon-worker', options);
  try {
    return await worker.next<AutocannonResult>('result', (options.warmupSeconds + options.durationSeconds + 30) * 1000);
  } finally {
    await worker.stop();
  }
}

/** A load run with errors or non-2xx answers is not a measurement. */
export function assertAllOk(label: string, result: AutocannonResult): void {
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0 || result.ok === 0) {
    throw new Error(`${label}: ${result.non2xx} non-2xx responses, ${result.errors} errors, ${result.timeouts} timeouts, ${result.ok} 2xx`);
  }
}
