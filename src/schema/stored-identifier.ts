import { METADATA_KEYS, type StoredNotification } from '../notification/stored-notification.js';
import { TopicDecodeError, decodeTopic } from '../topic/percent-codec.js';
import { WILDCARD } from '../topic/topic-pattern.js';
import type { EventSchema } from './event-schema.js';
import type { SchemaRegistry } from './schema-registry.js';

/** A stored notification read back: which event type it belongs to and its canonical identifier. */
export interface StoredIdentity {
  /** The schema key, or for schema-less event types the decoded topic base (O7). */
  readonly eventType: string;
  readonly schema: EventSchema | undefined;
  /** The decoded topic tokens, base first. */
  readonly tokens: readonly string[];
  /** Canonical values (D7), spatial fields included; `point_cloud` is not part of it. */
  readonly identifier: Readonly<Record<string, unknown>>;
  /**
   * The D7 header as stored: canonical JSON of `identifier`. Set only when aviso-ts wrote the
   * notification, whose payload text is then canonical JSON too.
   */
  readonly identifierJson: string | undefined;
}

/**
 * Reads notifications back into identities, once per notification object: every watcher of a
 * base sees the same objects, so the work is shared. Notifications written by aviso-ts carry the
 * D7 header; others (written by the reference) are rebuilt from the topic as the reference does
 * (docs/design/rules/schema-and-validation.md §9.5).
 */
export class StoredIdentityReader {
  private cache = new WeakMap<StoredNotification, StoredIdentity | null>();
  private readonly forgetListeners: (() => void)[] = [];

  constructor(private readonly registry: SchemaRegistry) {
    // A reload may rename or drop the schema of a base: identities read before it are stale.
    registry.onReplace(() => this.forgetAll());
  }

  /** Drops every cached identity (the schemas changed); listeners drop what they derived from them. */
  forgetAll(): void {
    this.cache = new WeakMap();
    for (const listener of this.forgetListeners) listener();
  }

  /** Called after every `forgetAll`, for caches built from identities (the CloudEvent renderer). */
  onForget(listener: () => void): void {
    this.forgetListeners.push(listener);
  }

  /** Inside `unshared`: the notification read last, and its identity (nothing is cached then). */
  private unsharedDepth = 0;
  private lastUnshared: StoredNotification | undefined;
  private lastUnsharedIdentity: StoredIdentity | undefined;

  /** `undefined` when the topic does not decode. */
  read(notification: StoredNotification): StoredIdentity | undefined {
    if (notification === this.lastUnshared) return this.lastUnsharedIdentity;
    const cached = this.cache.get(notification);
    if (cached !== undefined) return cached ?? undefined;
    const identity = this.compute(notification);
    if (this.unsharedDepth > 0) {
      this.lastUnshared = notification;
      this.lastUnsharedIdentity = identity;
    } else {
      this.cache.set(notification, identity ?? null);
    }
    return identity;
  }

  /**
   * Runs `run(notification)` for a notification no other stream will see (a JetStream replay's own
   * read): its identity is computed once for every read inside `run` and not cached beyond it, since
   * a cache entry per replayed message would only add work for the garbage collector.
   */
  unshared<T>(run: (notification: StoredNotification) => T, notification: StoredNotification): T {
    this.unsharedDepth++;
    try {
      return run(notification);
    } finally {
      if (--this.unsharedDepth === 0) {
        this.lastUnshared = undefined;
        this.lastUnsharedIdentity = undefined;
      }
    }
  }

  private compute(notification: StoredNotification): StoredIdentity | undefined {
    let tokens: string[];
    try {
      tokens = decodeTopic(notification.topic);
    } catch (error) {
      if (error instanceof TopicDecodeError) return undefined;
      throw error;
    }
    const base = tokens[0] as string;
    const schema = this.registry.forBase(base);
    const eventType = schema?.eventType ?? base;
    const headerText = notification.metadata?.[METADATA_KEYS.identifier];
    const fromHeader = headerText === undefined ? undefined : identifierHeader(headerText);
    if (fromHeader) {
      return { eventType, schema, tokens, identifier: fromHeader, identifierJson: headerText };
    }

    const identifier: Record<string, unknown> = {};
    schema?.keyOrder.forEach((key, index) => {
      const token = tokens[index + 1];
      if (token !== undefined && token !== '' && token !== WILDCARD) identifier[key] = token;
    });
    const geometry = notification.metadata?.[METADATA_KEYS.spatialGeometry];
    if (geometry !== undefined && identifier.polygon === undefined) identifier.polygon = geometry;
    return { eventType, schema, tokens, identifier, identifierJson: undefined };
  }
}

/**
 * The D7 header, read with the native parser: it holds canonical strings and polygon arrays of
 * coordinates, nothing whose number spelling or integer precision matters, and this runs for
 * every notification a watcher sees.
 */
function identifierHeader(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
