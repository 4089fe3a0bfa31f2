import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { benchConfig, exampleSchema } from './support/aviso-config.js';
import { startAviso } from './support/aviso-process.js';
import { Fleet } from './support/fleet.js';
import { censusChanges, readHeapCensus, totalBytes, type HeapCensus } from './support/heap-snapshot.js';
import { IDLE_WATCH_BODY } from './support/notifications.js';
import { makeTempDir, removeTempDir } from './support/processes.js';

/**
 * What an idle stream holds in the JavaScript heap, in two builds, object kind by object kind
 * (`node dist/bench/heap-ab.js --a OLD/dist/src/main.js [--b dist/src/main.js] [--streams 2000]
 * [--top 25]`). Each side opens `--streams` idle `POST /api/v1/watch` streams (the
 * `idle_watchers` body) and writes a heap snapshot (`--heapsnapshot-signal`); the snapshots are
 * counted by constructor and compared. `idle_watchers` says how much a stream costs in RSS; this
 * says which objects make the difference between two builds (a hidden class per stream, an array
 * kept per stream), and a snapshot does not move with the machine's load as RSS does.
 */
const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: 'dist/src/main.js' },
    streams: { type: 'string', default: '2000' },
    top: { type: 'string', default: '25' },
  },
});
if (values.a === undefined) throw new Error('--a <main.js of the other build> is required');
const streams = Number(values.streams);

/** The heap census of one build holding `streams` idle streams. */
async function censusOf(entry: string): Promise<HeapCensus> {
  const dir = makeTempDir('aviso-heap');
  const aviso = await startAviso({
    config: benchConfig({ schemas: { mars: exampleSchema('mars') }, backend: { kind: 'in_memory' } }),
    entry: resolve(entry),
    execArgv: ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`],
  });
  const fleet = await Fleet.start();
  try {
    const opened = await fleet.open(
      {
        origin: aviso.url,
        path: '/api/v1/watch',
        method: 'POST',
        opening: 'frame',
        groups: [{ body: IDLE_WATCH_BODY, count: streams }],
        concurrency: 100,
        expectedNotifications: 0,
      },
      180_000,
    );
    if (opened.opened !== streams) throw new Error(`only ${opened.opened} of ${streams} streams opened: ${opened.failures.join('; ')}`);
    process.kill(aviso.pid, 'SIGUSR2');
    return await censusWhenWritten(dir);
  } finally {
    await fleet.stop();
    await aviso.stop();
    removeTempDir(dir);
  }
}

/** The census of the snapshot the server writes into `dir`, once it is complete. */
async function censusWhenWritten(dir: string): Promise<HeapCensus> {
  for (let attempt = 0; attempt < 240; attempt++) {
    await sleep(500);
    const name = readdirSync(dir).find((file) => file.endsWith('.heapsnapshot'));
    if (name === undefined) continue;
    // The file appears before V8 has finished writing it: it is complete once it parses.
    try {
      return readHeapCensus(join(dir, name));
    } catch {
      // still being written
    }
  }
  throw new Error('the server wrote no heap snapshot within 120 s');
}

const a = await censusOf(values.a);
const b = await censusOf(values.b);
const perStream = (bytes: number) => Math.round(bytes / streams);
process.stdout.write(
  `heap with ${streams} idle streams: A ${totalBytes(a)} bytes, B ${totalBytes(b)} bytes; B − A = ${perStream(totalBytes(b) - totalBytes(a))} bytes per stream\n`,
);
process.stdout.write('bytes    objects  kind (B − A, largest first)\n');
for (const change of censusChanges(a, b, Number(values.top))) {
  process.stdout.write(`${String(change.bytes).padStart(8)} ${String(change.count).padStart(8)}  ${change.key.replace(/\n/g, ' ')}\n`);
}
process.exit(0);
