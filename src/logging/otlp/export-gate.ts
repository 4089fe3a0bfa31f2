import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { LogRecordExporter, ReadableLogRecord } from '@opentelemetry/sdk-logs';

/** `aviso_otlp_*` counters (docs/metrics.md): monotonic since the process started. */
export interface OtlpExportStats {
  /** Batches the collector did not accept (an error answer, no connection, or no answer in time). */
  readonly exportFailures: number;
  /** Records not handed to the SDK because the queue was full or the exporter was failing. */
  readonly suppressedRecords: number;
}

export type OtlpHealthListener = (change: { readonly healthy: boolean; readonly reason?: string }) => void;

export interface ExportGateOptions {
  /** The SDK batch processor's `maxQueueSize`: admitting more would make it drop silently. */
  readonly maxQueueSize: number;
  /**
   * Characters of line text the queued records may come from (D45): a count of records alone
   * lets a few thousand long lines hold a lot of memory.
   */
  readonly maxQueueCharacters: number;
  /** After a failed export, new records are suppressed this long before export is tried again. */
  readonly failureBackoffMs: number;
  /** An export not answered within this counts as failed (the exporter is then left to finish on its own). */
  readonly exportTimeoutMs: number;
  readonly now?: () => number;
}

/**
 * Admission control in front of the SDK's BatchLogRecordProcessor, plus the accounting the SDK
 * does not expose: its queue drops overflow silently and its export results stay internal.
 *
 * `queued` mirrors the processor's buffer exactly: the processor appends synchronously in
 * `onEmit` and removes a batch only when it calls `export()`, which goes through `wrap()` here.
 * So a record refused at `admit()` is precisely one the processor would have dropped, and it is
 * counted instead of lost without trace. While exports fail, records are refused for a back-off
 * period rather than queued for a collector that is not there: memory and CPU stay flat, and the
 * records already queued when the back-off ends probe whether the collector is back.
 */
export class ExportGate {
  private readonly now: () => number;
  private queued = 0;
  /** The length of each queued record's line, oldest first from `oldest`: the processor exports in that order. */
  private readonly lengths: number[] = [];
  private oldest = 0;
  private queuedCharacters = 0;
  private failingUntil = 0;
  private healthy = true;
  private listener: OtlpHealthListener | undefined;
  private exportFailures = 0;
  private suppressedRecords = 0;

  constructor(private readonly options: ExportGateOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Whether one more record, from a line of `characters`, may go to the SDK; counts it as suppressed when not. */
  admit(characters = 0): boolean {
    if (
      this.now() < this.failingUntil ||
      this.queued >= this.options.maxQueueSize ||
      this.queuedCharacters + characters > this.options.maxQueueCharacters
    ) {
      this.suppressedRecords += 1;
      return false;
    }
    this.queued += 1;
    this.queuedCharacters += characters;
    this.lengths.push(characters);
    return true;
  }

  /** `count` records left the processor's queue for an export: the oldest ones. */
  private released(count: number): void {
    const taken = Math.min(count, this.queued);
    for (let i = 0; i < taken; i++) this.queuedCharacters -= this.lengths[this.oldest + i] ?? 0;
    this.oldest += taken;
    this.queued -= taken;
    if (this.oldest > 1024 && this.oldest * 2 > this.lengths.length) {
      this.lengths.splice(0, this.oldest);
      this.oldest = 0;
    }
  }

  stats(): OtlpExportStats {
    return { exportFailures: this.exportFailures, suppressedRecords: this.suppressedRecords };
  }

  /** Called on each transition between exporting and failing (not per batch). */
  onHealthChange(listener: OtlpHealthListener): void {
    this.listener = listener;
  }

  /** The exporter the batch processor talks to: result codes observed, one answer per export, bounded in time. */
  wrap(inner: LogRecordExporter): LogRecordExporter {
    return {
      export: (records: ReadableLogRecord[], resultCallback: (result: ExportResult) => void) => {
        this.released(records.length);
        let answered = false;
        const answer = (result: ExportResult): void => {
          if (answered) return;
          answered = true;
          clearTimeout(timer);
          this.settle(result);
          resultCallback(result);
        };
        const timer = setTimeout(
          () => answer({ code: ExportResultCode.FAILED, error: new Error(`no answer within ${this.options.exportTimeoutMs} ms`) }),
          this.options.exportTimeoutMs,
        );
        timer.unref();
        try {
          inner.export(records, answer);
        } catch (error) {
          answer({ code: ExportResultCode.FAILED, error: error instanceof Error ? error : new Error(String(error)) });
        }
      },
      shutdown: () => inner.shutdown(),
      forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
    };
  }

  private settle(result: ExportResult): void {
    if (result.code === ExportResultCode.SUCCESS) {
      this.failingUntil = 0;
      if (!this.healthy) this.transition(true);
      return;
    }
    this.exportFailures += 1;
    this.failingUntil = this.now() + this.options.failureBackoffMs;
    if (this.healthy) this.transition(false, result.error?.message ?? 'export failed');
  }

  private transition(healthy: boolean, reason?: string): void {
    this.healthy = healthy;
    // A listener that logs goes through this very pipeline; it must never break the export path.
    try {
      this.listener?.(reason === undefined ? { healthy } : { healthy, reason });
    } catch {
      // ignored: reporting is best effort
    }
  }
}
