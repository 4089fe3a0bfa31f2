import type { Logger } from 'pino';
import type { SchemaStorage } from '../backend.js';
import type { JetStreamConfig } from '../../config/model.js';
import { encodeToken } from '../../topic/percent-codec.js';
import { streamNameOf } from '../../topic/stream-name.js';
import type { NatsLink } from './nats-link.js';
import { errorText, isStreamNameInUse, isStreamNotFound } from './nats-errors.js';
import {
  DEFAULT_DUPLICATE_WINDOW_SEC,
  desiredStreamConfig,
  driftedFields,
  updatedStreamConfig,
  type StreamLayout,
} from './stream-config.js';

/**
 * One JetStream stream per topic base (docs/design/rules/backends.md §7.3–§7.4): names, subject bindings, the
 * configuration each should have, and ensure-stream — create when missing, reconcile when the
 * configuration drifted — remembered per base until an operation finds the stream gone.
 */
export class StreamCatalog {
  private readonly byBase = new Map<string, SchemaStorage>();
  private readonly ensured = new Map<string, Promise<StreamLayout>>();

  constructor(
    private readonly link: NatsLink,
    private readonly defaults: JetStreamConfig,
    configured: readonly SchemaStorage[],
    private readonly logger: Logger,
    /** `idempotency.window`, every stream's duplicate window (bounded by its `max_age`). */
    private readonly duplicateWindowSec: number = DEFAULT_DUPLICATE_WINDOW_SEC,
  ) {
    for (const entry of configured) this.byBase.set(entry.base, entry);
  }

  /**
   * A reload's configured bases replace the old ones. Returns the bases that are new or whose
   * storage changed: the caller ensures them now, as startup's first use would have. Those and the
   * removed ones are forgotten, so their next use checks the stream again.
   */
  replaceConfigured(configured: readonly SchemaStorage[]): string[] {
    const next = new Map(configured.map((entry) => [entry.base, entry]));
    const touched: string[] = [];
    for (const [base, entry] of next) {
      const before = this.byBase.get(base);
      if (!before || JSON.stringify(storageOf(before)) !== JSON.stringify(storageOf(entry))) touched.push(base);
    }
    for (const base of this.byBase.keys()) if (!next.has(base)) this.forget(base);
    for (const base of touched) this.forget(base);
    this.byBase.clear();
    for (const [base, entry] of next) this.byBase.set(base, entry);
    return touched;
  }

  /** Stream compression needs NATS 2.10 (docs/design/rules/backends.md §7.5, D11). */
  get compressionSupported(): boolean {
    const [major = 0, minor = 0] = this.link.serverVersion.split('.').map(Number);
    return major > 2 || (major === 2 && minor >= 10);
  }

  layoutFor(base: string): StreamLayout {
    const configured = this.byBase.get(base);
    const token = encodeToken(base);
    // Schema-less bases may publish the bare event type (an empty identifier), so they bind both.
    const bare = configured ? configured.bareTopics : true;
    return {
      name: streamNameOf(base),
      subjects: bare ? [token, `${token}.>`] : [`${token}.>`],
      storagePolicy: configured?.storagePolicy,
    };
  }

  /** Names of the streams bound to configured bases: the only ones wipe-all touches (D22). */
  configuredStreamNames(): Set<string> {
    return new Set([...this.byBase.keys()].map(streamNameOf));
  }

  /** Schemas asking for compression on a server that cannot do it (warned about at startup). */
  uncompressibleSchemas(): { eventType: string; stream: string }[] {
    if (this.compressionSupported) return [];
    return [...this.byBase.values()]
      .filter((entry) => entry.storagePolicy?.compression === true)
      .map((entry) => ({ eventType: entry.eventType, stream: streamNameOf(entry.base) }));
  }

  /**
   * Schemas whose stream keeps notifications for less than the idempotency window: a retry after
   * `max_age` can no longer be recognised by the stream (warned about at startup).
   */
  shortRetentionSchemas(): { eventType: string; stream: string; maxAgeSec: number }[] {
    return [...this.byBase.values()].flatMap((entry) => {
      const maxAgeNs = desiredStreamConfig(this.layoutFor(entry.base), this.defaults, false).max_age;
      const maxAgeSec = maxAgeNs / 1_000_000_000;
      return maxAgeNs > 0 && maxAgeSec < this.duplicateWindowSec
        ? [{ eventType: entry.eventType, stream: streamNameOf(entry.base), maxAgeSec }]
        : [];
    });
  }

  async ensure(base: string): Promise<StreamLayout> {
    const layout = this.layoutFor(base);
    let pending = this.ensured.get(layout.name);
    if (!pending) {
      pending = this.ensureNow(layout);
      this.ensured.set(layout.name, pending);
      pending.catch(() => this.ensured.delete(layout.name));
    }
    return pending;
  }

  /** Forget that a stream was ensured, after an operation found it missing (docs/design/rules/backends.md §7.4). */
  forget(base: string): void {
    this.ensured.delete(streamNameOf(base));
  }

  forgetAll(): void {
    this.ensured.clear();
  }

  private async ensureNow(layout: StreamLayout): Promise<StreamLayout> {
    const { jsm } = this.link.clients();
    const supported = this.compressionSupported;
    const desired = desiredStreamConfig(layout, this.defaults, supported, this.duplicateWindowSec);
    let current;
    try {
      current = await jsm.streams.info(layout.name);
    } catch (error) {
      if (!isStreamNotFound(error)) {
        this.logger.warn(
          { event_name: 'backend.jetstream.stream.lookup.failed', stream: layout.name, error: errorText(error) },
          'Stream lookup failed; trying to create it',
        );
      }
    }
    if (current) {
      if (current.config.storage !== desired.storage) {
        // Storage cannot be changed in place, and recreating the stream would drop its history:
        // leave it to the operator and fail every request that needs it (docs/design/rules/reference-0.13.md §6).
        const mismatch = new StreamStorageMismatchError(layout.name, current.config.storage, desired.storage);
        this.logger.error(
          { event_name: 'backend.jetstream.stream.storage_mismatch', stream: layout.name, error: mismatch.message },
          mismatch.message,
        );
        throw mismatch;
      }
      const drifted = driftedFields(current.config, desired, supported);
      if (drifted.length > 0) {
        try {
          await jsm.streams.update(layout.name, updatedStreamConfig(current.config, desired, drifted));
          this.logger.info(
            { event_name: 'backend.jetstream.stream.reconciled', stream: layout.name, fields: drifted },
            `Stream ${layout.name} updated: ${drifted.join(', ')}`,
          );
        } catch (error) {
          this.logger.warn(
            { event_name: 'backend.jetstream.stream.reconcile.failed', stream: layout.name, fields: drifted, error: errorText(error) },
            `Stream ${layout.name} keeps its configuration`,
          );
        }
      }
      return layout;
    }
    try {
      await jsm.streams.add(desired);
      this.logger.info({ event_name: 'backend.jetstream.stream.created', stream: layout.name }, `Stream ${layout.name} created`);
    } catch (error) {
      // Another aviso-ts process created it first.
      if (!isStreamNameInUse(error)) throw error;
    }
    return layout;
  }
}

/** An existing stream stores in File and the configuration asks for Memory, or the other way round. */
class StreamStorageMismatchError extends Error {
  constructor(stream: string, current: string, requested: string) {
    super(`Stream '${stream}' storage mismatch: current ${storageLabel(current)}, requested ${storageLabel(requested)}`);
    this.name = 'StreamStorageMismatchError';
  }
}

/** `file` → `File`, as the reference prints JetStream's storage types. */
function storageLabel(storage: string): string {
  return storage.charAt(0).toUpperCase() + storage.slice(1);
}

/** What decides a base's stream layout and limits (the event type's name does not). */
function storageOf(entry: SchemaStorage): unknown {
  return { bareTopics: entry.bareTopics, storagePolicy: entry.storagePolicy ?? null };
}
