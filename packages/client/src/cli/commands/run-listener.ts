import { type AvisoClient, type StateStore, type WatchRequest } from '../../index.js';
import type { ListenerSpec } from '../listeners.js';
import { runTriggers } from '../triggers/run.js';
import { asIdentifier, describeListener, listenerLabel, triggerNotification, type CommandContext } from './common.js';
import { noticeRecord } from './notice-records.js';
import { RetryReporter } from './retry-reporter.js';

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
 * notification goes through every trigger before the next is pulled, and the library commits it
 * when the next is pulled. A history gap or a sequence reset the server says is one WARN record
 * each, and the listener goes on. On the way out, whatever the reason, the last notification whose
 * triggers all succeeded is saved (the aviso command's flush of the cursor on exit); one whose
 * required trigger failed never is. A flush that fails is a warning: the only consequence is that
 * the next run delivers that notification again.
 */
export async function runListener(client: AvisoClient, ctx: CommandContext, run: ListenerRun): Promise<void> {
  const { listener } = run;
  const label = listenerLabel(listener);
  const retries = new RetryReporter(label, () => Date.now());
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
        ctx.output.line(`Listening for ${describeListener(listener)}. Press Ctrl+C to stop.`);
      } else if (status.type === 'reconnecting') {
        const report = retries.retry(status.reason, status.delayMs);
        if (report) ctx.output.log.log('info', report.body, report.attributes);
      } else if (status.type === 'historyGap' || status.type === 'sequenceReset') {
        // Reported as the iteration reaches it: after the notifications before it, before the next.
        const record = noticeRecord(label, status.type === 'historyGap' ? status.gap : status.reset);
        ctx.output.log.log('warn', record.body, record.attributes);
      }
    },
  });
  const triggerEnv = {
    listenerName: listener.name,
    human: ctx.output.human,
    color: ctx.output.color,
    write: (text: string) => ctx.output.write(text),
    env: ctx.env,
  };
  const warn = (message: string, attributes: Readonly<Record<string, unknown>>): void =>
    ctx.output.log.log('warn', message, { listener: label, ...attributes });
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
    if (handledLast && run.stateStore) {
      await stream.commit().catch((error: unknown) =>
        warn('failed to flush the last cursor on exit; the next run may deliver this notification again', {
          'event.name': 'client.resume.flush_on_exit_failed',
          sequence: stream.lastSequence,
          error: error instanceof Error ? error.message : String(error),
        }),
      );
    }
  }
}
