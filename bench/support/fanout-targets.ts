import type { BroadcastCommand, BroadcastDone } from '../baselines/sse-frame-server.js';
import { benchConfig, exampleSchema } from './aviso-config.js';
import { startAviso } from './aviso-process.js';
import { startCFloor } from './c-floor.js';
import type { Subscription } from './fleet-set.js';
import { startPrivateNats, type PrivateNats } from './nats.js';
import { NCHAN_PUBLISH_PATH, NCHAN_SUBSCRIBE_PATH, startNchan } from './nchan.js';
import { NotifyClient } from './notify-client.js';
import { fanoutCloudEvent, fanoutNotificationBody, fanoutWatchBody } from './notifications.js';
import { Worker } from './processes.js';
import { atFixedRate } from './rate-schedule.js';
import type { ReadyMessage } from './ready.js';
import { epochMs } from './stats.js';
import { findFreePort } from '../../test/support/nats-server.js';

/**
 * The servers a fan-out capacity search measures, behind one shape: where the fleet subscribes,
 * which processes are the server, and how a step's notifications are published (each carrying its
 * index and send time, so the fleet reads every server's frames the same way).
 */

export interface PublishOutcome {
  readonly firstSendMs: number;
  readonly lastSendMs: number;
  /** Publishes the server did not accept, and the first answer of one. */
  readonly refused: number;
  readonly refusal: string | undefined;
}

export interface FanoutTarget {
  readonly name: string;
  readonly subscription: Subscription;
  /** The server's root process; its CPU is read over it and every process below it. */
  readonly serverPid: number;
  /** The message broker the server depends on (nats-server), measured beside it. */
  readonly brokerPid: number | undefined;
  /** Whether this (the bench) process publishes: its CPU then counts as the publisher's. */
  readonly publishesFromBench: boolean;
  /** Publishes notifications `first` … `first + count − 1` at `ratePerSecond`; resolves once every publish was answered. */
  publish(first: number, count: number, ratePerSecond: number): Promise<PublishOutcome>;
  /** Checks, once the fleet's streams are open, that the server counts `watchers` subscribers. */
  checkSubscribers(watchers: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * An aviso configuration under test. `application` is added to the bench's `application` block:
 * another process layout (e.g. `{ workers: 2 }`) is one more entry in the scenario's list, and its
 * CPU is still read over the whole process tree.
 */
export interface AvisoSide {
  readonly name: string;
  readonly backend: 'in_memory' | 'jetstream';
  readonly application: Readonly<Record<string, unknown>>;
  /** Another build's `dist/src/main.js` (an A/B of two builds); this checkout's when absent. */
  readonly entry?: string;
  /** Serve Prometheus metrics, as production does (the per-delivery series then cost their share). */
  readonly metrics?: boolean;
}

async function publishAtRate(
  count: number,
  ratePerSecond: number,
  send: (slot: number, sentMs: number) => Promise<{ status: number; body: string }>,
  accepted: (status: number) => boolean,
): Promise<PublishOutcome> {
  let firstSendMs = Number.NaN;
  let lastSendMs = Number.NaN;
  const answers = await atFixedRate(count, ratePerSecond, (slot) => {
    const sentMs = epochMs();
    if (slot === 0) firstSendMs = sentMs;
    lastSendMs = sentMs;
    return send(slot, sentMs);
  });
  const refused = answers.filter((answer) => !accepted(answer.status));
  const first = refused[0];
  return {
    firstSendMs,
    lastSendMs,
    refused: refused.length,
    refusal: first === undefined ? undefined : `${first.status} ${first.body.slice(0, 200)}`,
  };
}

/**
 * Every fan-out notification has the same identifier, so one topic. With JetStream's default
 * retention (`max_msgs_per_subject: 1`) a notification is replaced by the next one on its topic,
 * and when the live feed lags behind the stream (a saturated step) the replaced ones are never read
 * by it: the search would stop at that loss rather than at the delivery speed. Keeping every
 * message (as `notify_jetstream` does) measures delivery; bench/README.md describes the loss.
 */
const KEEP_EVERY_NOTIFICATION = { storage_policy: { allow_duplicates: true } };

/** aviso (built server, its own process) with the `extreme_event` type of config/config.yaml; notified over HTTP. */
export async function startAvisoTarget(side: AvisoSide): Promise<FanoutTarget> {
  const nats: PrivateNats | undefined = side.backend === 'jetstream' ? await startPrivateNats() : undefined;
  try {
    const aviso = await startAviso({
      config: benchConfig({
        schemas: { extreme_event: exampleSchema('extreme_event', nats === undefined ? {} : KEEP_EVERY_NOTIFICATION) },
        backend: nats === undefined ? { kind: 'in_memory' } : { kind: 'jetstream', natsUrl: nats.url },
        application: side.application,
        ...(side.metrics ? { metrics: await findFreePort() } : {}),
      }),
      ...(side.entry === undefined ? {} : { entry: side.entry }),
    });
    const client = new NotifyClient(aviso.url);
    return {
      name: side.name,
      subscription: { origin: aviso.url, path: '/api/v1/watch', method: 'POST', opening: 'frame', body: fanoutWatchBody },
      serverPid: aviso.pid,
      brokerPid: nats?.pid,
      publishesFromBench: true,
      publish: (first, count, rate) =>
        publishAtRate(
          count,
          rate,
          (slot, sentMs) => client.post('/api/v1/notification', fanoutNotificationBody(first + slot, sentMs)),
          (status) => status === 200,
        ),
      // aviso writes a stream's opening frame after registering its watch (the history bound is
      // taken then), so every stream the fleet counts as open is on the server.
      checkSubscribers: async () => {},
      async stop() {
        client.close();
        await aviso.stop();
        await nats?.stop();
      },
    };
  } catch (error) {
    await nats?.stop();
    throw error;
  }
}

/** The bare node:http SSE server (`baselines/sse-frame-server`), which writes each step's frames itself. */
export async function startBareTarget(): Promise<FanoutTarget> {
  const server = Worker.start<BroadcastCommand>('baselines/sse-frame-server', {});
  try {
    const { port } = await server.next<ReadyMessage>('ready', 15_000);
    const broadcast = async (first: number, count: number, ratePerSecond: number): Promise<BroadcastDone> => {
      server.send({ type: 'broadcast', count, warmup: 0, ratePerSecond, firstIndex: first });
      return server.next<BroadcastDone>('broadcast_done', (count / ratePerSecond) * 1000 + 30_000);
    };
    return {
      name: 'bare_node',
      subscription: { origin: `http://127.0.0.1:${port}`, path: '/api/v1/watch', method: 'POST', opening: 'frame', body: fanoutWatchBody },
      serverPid: server.pid,
      brokerPid: undefined,
      publishesFromBench: false,
      async publish(first, count, ratePerSecond) {
        const done = await broadcast(first, count, ratePerSecond);
        return { firstSendMs: done.firstSendMs, lastSendMs: done.lastSendMs, refused: 0, refusal: undefined };
      },
      async checkSubscribers(watchers) {
        // A broadcast of nothing answers with the number of responses the server holds.
        const { clients } = await broadcast(0, 0, 1);
        if (clients !== watchers) throw new Error(`the bare server holds ${clients} of ${watchers} streams`);
      },
      stop: () => server.stop(),
    };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

/** Nchan (nginx, one worker): the step's messages are POSTed to its publisher location, as a provider would. */
export async function startNchanTarget(watchers: number): Promise<FanoutTarget> {
  const nchan = await startNchan({ connections: watchers + 100 });
  const client = new NotifyClient(nchan.url);
  return {
    name: 'nchan',
    subscription: { origin: nchan.url, path: NCHAN_SUBSCRIBE_PATH, method: 'GET', opening: 'comment', body: () => '' },
    serverPid: nchan.masterPid,
    brokerPid: undefined,
    publishesFromBench: true,
    publish: (first, count, rate) =>
      // 201: delivered to the channel's subscribers (202 would mean there were none).
      publishAtRate(
        count,
        rate,
        (slot, sentMs) => client.post(NCHAN_PUBLISH_PATH, fanoutCloudEvent(first + slot, sentMs)),
        (status) => status === 201,
      ),
    async checkSubscribers(expected) {
      const subscribers = await nchan.subscribers();
      if (subscribers !== expected) throw new Error(`nchan counts ${subscribers} of ${expected} subscribers on its channel`);
    },
    async stop() {
      client.close();
      await nchan.stop();
    },
  };
}

/**
 * The C floor (`baselines/c-fanout-server.c`, compiled as `program`): the bench paces the step and
 * hands each frame, made by the bare server's `fanoutCloudEvent`, to the process over its stdin,
 * so the floor's CPU is the fan-out alone (one pipe read per notification besides the writes).
 */
export async function startCFloorTarget(program: string): Promise<FanoutTarget> {
  const floor = await startCFloor(program);
  return {
    name: 'c_floor',
    subscription: {
      origin: `http://127.0.0.1:${floor.port}`,
      path: '/api/v1/watch',
      method: 'POST',
      opening: 'frame',
      body: fanoutWatchBody,
    },
    serverPid: floor.pid,
    brokerPid: undefined,
    publishesFromBench: true,
    async publish(first, count, rate) {
      const outcome = await publishAtRate(
        count,
        rate,
        async (slot, sentMs) => {
          floor.publish(fanoutCloudEvent(first + slot, sentMs));
          return { status: 200, body: '' };
        },
        () => true,
      );
      // Commands are carried out in order: once the count is answered, every frame of the step was written.
      await floor.clients();
      return outcome;
    },
    async checkSubscribers(watchers) {
      const clients = await floor.clients();
      if (clients !== watchers) throw new Error(`the C floor holds ${clients} of ${watchers} streams`);
    },
    stop: () => floor.stop(),
  };
}
