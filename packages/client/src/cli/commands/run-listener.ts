import { type AvisoClient, type StateStore, type WatchRequest } from '../../index.js';
import type { ListenerSpec } from '../listeners.js';
import { runTriggers } from '../triggers/run.js';
import { asIdentifier, listeningBanner, triggerNotification, type CommandContext } from './common.js';

export interface ListenerRun {
  readonly listener: ListenerSpec;
  readonly from: WatchRequest['from'];
  readonly to?: WatchRequest['to'];
  readonly replayOnly: boolean;
  readonly stateStore?: StateStore;
  readonly startupTimeoutMs?: number;
  /** Print `Listening for ...` once the first opening is confirmed. */
  readonly banner: boolean;
}

/**
 * Runs one listener until its stream ends, Ctrl+C, or a terminal error (thrown). Each
 * notification goes through every trigger before the next is pulled, so the library commits
 * it on the next pull; on a graceful stop the last fully handled one is flushed explicitly.
 */
export async function runListener(client: AvisoClient, ctx: CommandContext, run: ListenerRun): Promise<void> {
  const { listener } = run;
  let bannerShown = false;
  const stream = client.watch({
    eventType: listener.event,
    identifier: asIdentifier(listener.identifiers),
    ...(run.from ? { from: run.from } : {}),
    ...(run.to ? { to: run.to } : {}),
    replayOnly: run.replayOnly,
    ...(run.stateStore ? { stateStore: run.stateStore } : {}),
    ...(run.startupTimeoutMs === undefined ? {} : { startupTimeoutMs: run.startupTimeoutMs }),
    ...(ctx.settings.heartbeatIntervalMs.value === undefined ? {} : { heartbeatIntervalMs: ctx.settings.heartbeatIntervalMs.value }),
    signal: ctx.signal,
    onStatus: (status) => {
      if (status.type === 'opened' && run.banner && !bannerShown) {
        bannerShown = true;
        ctx.output.info(listeningBanner(listener));
      } else if (status.type === 'reconnecting') {
        ctx.output.debug(`${listener.name ?? listener.event}: reconnecting in ${Math.round(status.delayMs)} ms (${status.reason})`);
      }
    },
  });
  const triggerEnv = {
    listenerName: listener.name,
    human: ctx.output.human,
    write: (text: string) => ctx.output.write(text),
    env: ctx.env,
  };
  const warn = (message: string): void => ctx.output.info(message);
  let handledLast = false;
  try {
    for await (const notification of stream) {
      handledLast = false;
      await runTriggers(listener.triggers, triggerNotification(notification), triggerEnv, { signal: ctx.signal, warn });
      handledLast = true;
    }
  } catch (error) {
    // A Ctrl+C that interrupts a retry wait is a graceful stop, not a failure.
    if (!ctx.signal.aborted) throw error;
  } finally {
    stream.close();
  }
  if (handledLast && run.stateStore) await stream.commit();
}
