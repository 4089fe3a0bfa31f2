import { Agent, request } from 'node:http';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type {
  FleetCommand,
  FleetOpenCommand,
  FleetOpened,
  FleetProgress,
  FleetReport,
  FleetWindowCommand,
  FleetWindowSet,
} from './fleet-protocol.js';
import { openRawSse } from './raw-sse-stream.js';
import { percentileOfSorted, epochMs } from './stats.js';
import { onCommand, reply, runWorker } from './worker-side.js';

/**
 * The SSE client fleet: one process holding many streams (node:http with a keep-alive agent,
 * eventsource-parser), recording for every notification its latency (receive time − the send time in
 * its payload, both epoch ms from `performance`) and which stream got which notification.
 *
 * A notification is a `live-notification` or `replay` frame whose data is a CloudEvent
 * (`{"data":…`, keys sorted) carrying `"payload":{"i":<n>,"sent_ms":<t>}`, where a negative `i`
 * marks a warm-up notification that is not counted; the first frame of a stream is its opening
 * frame, whatever it is (or, with `opening: 'comment'`, its first comment line opens it). With
 * `targets` (selective delivery) notification `i` belongs to one stream only: it counts there, and
 * anywhere else it is a misdelivery. A `window` command moves the counted indices to
 * `first` … `first + count − 1` and starts counting afresh (a capacity search's steps).
 */

interface Stream {
  /** Global index (`streamOffset` + position in this process). */
  index: number;
  /** Notifications this stream must receive. */
  expected: number;
  opened: boolean;
  ended: boolean;
  closeReason: string | undefined;
  distinct: number;
  seen: Uint8Array;
  /** Ends the stream from the client side. */
  close: (() => void) | undefined;
  /** Called once, with the opening frame. */
  onOpened: () => void;
}

const PAYLOAD_MARK = '"payload":{"i":';
const SENT_MARK = ',"sent_ms":';

let streams: Stream[] = [];
let expected = 0;
let latencies = new Float64Array(0);
let latencyCount = 0;
let duplicates = 0;
let unexpected = 0;
let errorFrames = 0;
let misdelivered = 0;
let targets: readonly number[] | undefined;
/** With `targets`: how many notifications each global stream index owns (counted once per `open`). */
let ownedPerIndex: Int32Array = new Int32Array(0);
let streamOffset = 0;
let keepSamples = false;
let opening: 'frame' | 'comment' = 'frame';
let reader: 'node-http' | 'raw-socket' = 'node-http';
/** The payload index counted as a stream's notification 0 (see `window`). */
let windowFirst = 0;
/** Distinct notifications received over every stream, and how many there must be. */
let receivedTotal = 0;
let ownedTotal = 0;
let completeSent = false;
let firstReceiveMs = Number.NaN;
let lastReceiveMs = Number.NaN;
const agent = new Agent({ keepAlive: true, maxSockets: Infinity });

function onNotification(stream: Stream, data: string, receivedMs: number): void {
  const at = data.indexOf(PAYLOAD_MARK);
  const sentAt = at < 0 ? -1 : data.indexOf(SENT_MARK, at);
  if (sentAt < 0) {
    unexpected++;
    return;
  }
  const index = Number(data.slice(at + PAYLOAD_MARK.length, sentAt));
  const sentMs = Number.parseFloat(data.slice(sentAt + SENT_MARK.length));
  if (index < 0 && Number.isInteger(index)) return; // a warm-up notification
  const slot = index - windowFirst;
  if (!Number.isInteger(index) || slot < 0 || slot >= expected) {
    unexpected++;
    return;
  }
  if (targets !== undefined && targets[slot] !== stream.index) {
    misdelivered++;
    return;
  }
  if (stream.seen[slot] === 1) {
    duplicates++;
    return;
  }
  stream.seen[slot] = 1;
  stream.distinct++;
  if (latencyCount < latencies.length) latencies[latencyCount++] = receivedMs - sentMs;
  if (Number.isNaN(firstReceiveMs)) firstReceiveMs = receivedMs;
  lastReceiveMs = receivedMs;
  if (++receivedTotal === ownedTotal && !completeSent) {
    completeSent = true;
    reply({ type: 'complete' });
  }
}

function onFrame(stream: Stream, message: EventSourceMessage): void {
  const receivedMs = epochMs();
  if (!stream.opened) {
    stream.opened = true;
    stream.onOpened();
    return;
  }
  switch (message.event) {
    case 'live-notification':
    case 'replay':
      if (message.data.startsWith('{"data":')) onNotification(stream, message.data, receivedMs);
      return;
    case 'connection-closing': {
      const reason = /"reason":"([^"]*)"/.exec(message.data)?.[1] ?? 'unreadable';
      // The cause tells a slow-consumer close from a completion; both are `end_of_stream` (D32).
      const cause = /"cause":"([^"]*)"/.exec(message.data)?.[1];
      stream.closeReason = cause ? `${reason} (cause ${cause})` : reason;
      return;
    }
    case 'error':
      errorFrames++;
      return;
    default:
      return; // heartbeat, replay-control
  }
}

type OpenOutcome = { ok: true } | { ok: false; reason: string };

function requestHeaders(method: 'GET' | 'POST', body: string): Record<string, string> {
  return method === 'POST'
    ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }
    : { accept: 'text/event-stream' };
}

/** node:http with the keep-alive agent, frames parsed by eventsource-parser. */
function openWithNodeHttp(
  stream: Stream,
  origin: URL,
  path: string,
  method: 'GET' | 'POST',
  body: string,
  settle: (outcome: OpenOutcome) => void,
): void {
  const req = request({ agent, host: origin.hostname, port: origin.port, path, method, headers: requestHeaders(method, body) }, (res) => {
    if (res.statusCode !== 200) {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => settle({ ok: false, reason: `status ${res.statusCode}: ${text.slice(0, 300)}` }));
      stream.ended = true;
      return;
    }
    const parser = createParser({
      onEvent: (message) => onFrame(stream, message),
      onComment: opening === 'comment' ? () => openedByComment(stream) : undefined,
    });
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => parser.feed(chunk));
    res.on('close', () => {
      stream.ended = true;
      settle({ ok: false, reason: 'stream ended before its opening frame' });
    });
  });
  stream.close = () => req.destroy();
  req.on('error', (error) => {
    stream.ended = true;
    settle({ ok: false, reason: error.message });
  });
  if (method === 'POST') req.end(body);
  else req.end();
}

/** Its own TCP socket, the request written and the response read by `raw-sse-stream.ts`. */
function openWithRawSocket(
  stream: Stream,
  origin: URL,
  path: string,
  method: 'GET' | 'POST',
  body: string,
  settle: (outcome: OpenOutcome) => void,
): void {
  const headers = requestHeaders(method, body);
  delete headers['content-length'];
  const handle = openRawSse(
    { host: origin.hostname, port: Number(origin.port), path, method, headers, body: method === 'POST' ? body : '' },
    {
      onEvent: (event, data) => onFrame(stream, { event, data, id: undefined }),
      onComment: () => {
        if (opening === 'comment') openedByComment(stream);
      },
      onRefused: (status, text) => {
        stream.ended = true;
        settle({ ok: false, reason: `status ${status}: ${text.slice(0, 300)}` });
      },
      onClose: (error) => {
        stream.ended = true;
        settle({ ok: false, reason: error?.message ?? 'stream ended before its opening frame' });
      },
    },
  );
  stream.close = () => handle.destroy();
}

function openStream(origin: URL, path: string, method: 'GET' | 'POST', body: string): Promise<OpenOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: OpenOutcome): void => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    const index = streamOffset + streams.length;
    const own = targets === undefined ? expected : (ownedPerIndex[index] ?? 0);
    const stream: Stream = {
      index,
      expected: own,
      opened: false,
      ended: false,
      closeReason: undefined,
      distinct: 0,
      seen: new Uint8Array(expected),
      close: undefined,
      onOpened: () => settle({ ok: true }),
    };
    streams.push(stream);
    ownedTotal += own;
    if (reader === 'raw-socket') openWithRawSocket(stream, origin, path, method, body, settle);
    else openWithNodeHttp(stream, origin, path, method, body, settle);
  });
}

function openedByComment(stream: Stream): void {
  if (stream.opened) return;
  stream.opened = true;
  stream.onOpened();
}

/** How many times each index occurs in `targets`, by index (0 past the largest). */
function countPerIndex(targets: readonly number[]): Int32Array {
  let largest = -1;
  for (const target of targets) if (target > largest) largest = target;
  const counts = new Int32Array(largest + 1);
  for (const target of targets) counts[target] = (counts[target] ?? 0) + 1;
  return counts;
}

async function open(command: FleetOpenCommand): Promise<void> {
  const started = epochMs();
  expected = command.expectedNotifications;
  targets = command.targets;
  streamOffset = command.streamOffset ?? 0;
  keepSamples = command.keepSamples ?? false;
  opening = command.opening ?? 'frame';
  reader = command.reader ?? 'node-http';
  windowFirst = 0;
  if (targets !== undefined && targets.length !== expected) throw new Error('targets must have one entry per expected notification');
  if (targets !== undefined) ownedPerIndex = countPerIndex(targets);
  const total = command.groups.reduce((sum, group) => sum + group.count, 0);
  latencies = new Float64Array(targets === undefined ? total * expected : expected);
  const bodies: string[] = [];
  for (const group of command.groups) for (let i = 0; i < group.count; i++) bodies.push(group.body);
  const origin = new URL(command.origin);
  let opened = 0;
  const failures: string[] = [];
  let next = 0;
  // `concurrency` slots, each opening the next stream once its previous one got its opening frame.
  const slot = async (): Promise<void> => {
    while (next < bodies.length) {
      const body = bodies[next++] as string;
      const outcome = await openStream(origin, command.path, command.method ?? 'POST', body);
      if (outcome.ok) opened++;
      else failures.push(outcome.reason);
    }
  };
  await Promise.all(Array.from({ length: Math.min(command.concurrency, bodies.length) }, slot));
  reply<FleetOpened>({
    type: 'opened',
    opened,
    failed: failures.length,
    failures: failures.slice(0, 5),
    elapsedMs: epochMs() - started,
  });
}

function startWindow(command: FleetWindowCommand): void {
  if (targets !== undefined) throw new Error('a counting window needs every stream to receive every notification (no targets)');
  windowFirst = command.first;
  expected = command.count;
  for (const stream of streams) {
    stream.expected = command.count;
    stream.distinct = 0;
    stream.seen = new Uint8Array(command.count);
  }
  latencies = new Float64Array(streams.length * command.count);
  latencyCount = 0;
  duplicates = 0;
  unexpected = 0;
  errorFrames = 0;
  receivedTotal = 0;
  ownedTotal = streams.length * command.count;
  completeSent = false;
  firstReceiveMs = Number.NaN;
  lastReceiveMs = Number.NaN;
  reply<FleetWindowSet>({ type: 'window_set' });
}

function report(): void {
  const sorted = latencies.subarray(0, latencyCount).sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  let received = 0;
  let lost = 0;
  let streamsWithLoss = 0;
  const closeReasons: Record<string, number> = {};
  for (const stream of streams) {
    received += stream.distinct;
    lost += stream.expected - stream.distinct;
    if (stream.distinct < stream.expected) streamsWithLoss++;
    const reason = stream.closeReason ?? (stream.ended ? 'ended without connection-closing' : undefined);
    if (reason !== undefined) closeReasons[reason] = (closeReasons[reason] ?? 0) + 1;
  }
  reply<FleetReport>({
    type: 'report',
    streams: streams.length,
    expectedPerStream: expected,
    received,
    duplicates,
    unexpected,
    lost,
    streamsWithLoss,
    latencyMs: {
      p50: percentileOfSorted(sorted, 50),
      p99: percentileOfSorted(sorted, 99),
      max: percentileOfSorted(sorted, 100),
      mean: sorted.length > 0 ? sum / sorted.length : Number.NaN,
    },
    firstReceiveMs,
    lastReceiveMs,
    closeReasons,
    errorFrames,
    misdelivered,
    ...(keepSamples ? { samplesMs: Array.from(sorted) } : {}),
  });
}

function close(): void {
  for (const stream of streams) stream.close?.();
  agent.destroy();
  streams = [];
  reply({ type: 'closed' });
}

runWorker(async () => {
  onCommand<FleetCommand>(async (command) => {
    switch (command.type) {
      case 'open':
        await open(command);
        return;
      case 'window':
        startWindow(command);
        return;
      case 'progress':
        reply<FleetProgress>({ type: 'progress', received: streams.reduce((sum, stream) => sum + stream.distinct, 0) });
        return;
      case 'report':
        report();
        return;
      case 'close':
        close();
        return;
    }
  });
  reply({ type: 'ready' });
});
