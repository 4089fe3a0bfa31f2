import type { Logger } from 'pino';
import type { StreamEndpoint } from '../schema/watch-identifier.js';
import { SharedFilters } from '../filter/shared-filters.js';
import { compileWatchFilter, type WatchSelection } from '../filter/watch-filter.js';
import type { EventSchema } from '../schema/event-schema.js';
import type { StoredIdentityReader } from '../schema/stored-identifier.js';
import type { CloseReason } from './frames.js';
import type { ReplayEndRequest, StartCursorRequest } from './stream-range.js';
import type { StreamTelemetry } from './stream-request.js';
import type { StreamDependencies } from './stream-dependencies.js';
import { DueQueue } from './due-queue.js';
import { StreamSession, type StreamSchedule } from './stream-session.js';
import type { StreamSink } from './stream-sink.js';
import { StreamSlots, type StreamSlot } from './stream-slots.js';
import { filterOf, type OpenStream, type OpenStreamDirectory } from './open-streams.js';

export interface StreamSupervisorDependencies extends StreamDependencies {
  readonly identities: StoredIdentityReader;
  /** `application.max_streams` (D44). */
  readonly maxStreams: number;
}

export interface OpenStreamRequest {
  readonly endpoint: StreamEndpoint;
  /** The request's place under the stream limit (`takeSlot`): given back when the stream is released. */
  readonly slot: StreamSlot;
  readonly requestId: string;
  /** The request's logger: the stream's lines carry its context. */
  readonly logger: Logger;
  /**
   * When the credentials the request was opened with are refused (`AuthUser.expiresAt`): whichever
   * route opened the stream, it ends then.
   */
  readonly credentialsExpireAt: number | undefined;
  readonly selection: WatchSelection;
  /** The schema the selection was validated against; absent for a schema-less event type. */
  readonly schema?: EventSchema | undefined;
  readonly cursor: StartCursorRequest;
  readonly end: ReplayEndRequest;
  readonly quota: number;
  readonly telemetry: StreamTelemetry;
  /** The schema configuration's version that validated the request (D43). */
  readonly schemaVersion: string;
  /** A GET stream: its frames carry ids; see `StreamRequest.browser`. */
  readonly browser?: { readonly eventType: string };
  /**
   * A GET replay's `Last-Event-ID` sequence: when it is at or past the replay's end, resolved at
   * setup as for any replay, there is nothing left to send and no stream is opened.
   */
  readonly resumeAfter?: bigint;
  /** Who opened the stream, as the admin streams list shows it (D49). */
  readonly owner: StreamOwner;
}

export interface StreamOwner {
  /** The authenticated user's name, `null` when anonymous. */
  readonly user: string | null;
  /** The client's address (`request.ip`). */
  readonly clientAddress: string;
}

/** An open stream and what the admin list says of it beyond the session's own state. */
interface ListedSession {
  readonly session: StreamSession;
  readonly owner: StreamOwner;
  readonly method: 'GET' | 'POST';
  readonly openedAt: number;
  /** The stream request's logger: an admin's close is logged under the stream's request id. */
  readonly logger: Logger;
}

/** `finished`: a GET replay resumed at or past its end; the caller answers 204 so `EventSource` stops reconnecting. */
export type OpenOutcome = 'opened' | 'finished';

/**
 * Opens streams and knows every open one, so shutdown can close them all with `server_shutdown`
 * and tests can check that nothing outlives its stream; and
 * holds them to `application.max_streams` (D44).
 */
export class StreamSupervisor implements OpenStreamDirectory {
  /** Every open stream by its request id (D4: fresh per request), from setup to release. */
  private readonly sessions = new Map<string, ListedSession>();
  private readonly slots: StreamSlots;
  private closingReason: CloseReason | undefined;
  /** Streams with the same filter evaluate it once per notification (shared-filters.ts). */
  private readonly filters = new SharedFilters();

  private readonly schedule: StreamSchedule;

  constructor(private readonly deps: StreamSupervisorDependencies) {
    const { clock, settings } = deps;
    this.slots = new StreamSlots(deps.maxStreams);
    this.schedule = {
      heartbeats: new DueQueue(clock, settings.heartbeatIntervalSec * 1000, true, (session) => session.heartbeatDue()),
      lifetimes: new DueQueue(clock, settings.connectionMaxDurationSec * 1000, false, (session) => session.close('max_duration_reached')),
    };
  }

  get openStreams(): number {
    return this.sessions.size;
  }

  /** `application.max_streams`. */
  get maxStreams(): number {
    return this.slots.limit;
  }

  /**
   * A place for a stream request under `application.max_streams`, taken before the request is
   * looked at, or `undefined` when every place is taken (D44). `open` gives it back when the
   * stream is released; a request that ends without calling `open` gives it back itself.
   */
  takeSlot(): StreamSlot | undefined {
    return this.slots.take();
  }

  /**
   * Sets up the backend side, then has the transport take the response over (`takeOver`, called
   * only when a stream will be sent). Rejects (before anything is sent) when the backend cannot
   * set the stream up; the caller answers with an HTTP error.
   */
  async open(request: OpenStreamRequest, takeOver: () => StreamSink): Promise<OpenOutcome> {
    const { logger, slot, owner, ...opened } = request;
    const { selection, schema } = opened;
    const filter = this.filters.acquire(selection, schema, () => compileWatchFilter(selection, this.deps.identities));
    const session = new StreamSession(
      { ...opened, predicate: filter.predicate },
      // Field by field, not a spread of this.deps: a spread plus added fields gives each stream's
      // object a shape of its own (about 400 bytes more per idle stream, bench/HISTORY.md "The live
      // phase's fan-out cost").
      {
        backend: this.deps.backend,
        renderer: this.deps.renderer,
        clock: this.deps.clock,
        settings: this.deps.settings,
        logger,
        guards: this.deps.guards,
        deliveryLag: this.deps.deliveryLag,
        schedule: this.schedule,
        onReleased: (released) => {
          if (this.sessions.get(released.request.requestId)?.session === released) this.sessions.delete(released.request.requestId);
          filter.release();
          slot.release();
        },
      },
    );
    try {
      await session.setup();
    } catch (error) {
      // Whatever setup got (a live subscription, the shared filter) is let go with it.
      session.discard();
      throw error;
    }
    if (request.endpoint === 'replay' && request.resumeAfter !== undefined && isResumedAtEnd(request, session)) {
      session.discard();
      return 'finished';
    }
    this.sessions.set(request.requestId, {
      session,
      owner,
      method: request.browser ? 'GET' : 'POST',
      openedAt: this.deps.clock.now(),
      logger,
    });
    session.begin(takeOver());
    // A stream opened while shutting down consists of its opening frame and the shutdown close.
    if (this.closingReason) session.close(this.closingReason);
    return 'opened';
  }

  /** Ends every open stream with its final frame. */
  closeAll(reason: CloseReason): void {
    this.closingReason = reason;
    for (const { session } of [...this.sessions.values()]) session.close(reason);
  }

  /** This process's open streams for the admin list (D49), in the order they opened. */
  list(): OpenStream[] {
    const streams: OpenStream[] = [];
    for (const { session, owner, method, openedAt } of this.sessions.values()) {
      const { request } = session;
      const progress = session.progress;
      streams.push({
        id: request.requestId,
        route: request.endpoint,
        method,
        event_type: request.selection.eventType,
        filter: filterOf(request.selection),
        topic_pattern: request.selection.pattern.display,
        user: owner.user,
        client_address: owner.clientAddress,
        opened_at: new Date(openedAt).toISOString(),
        phase: progress.phase,
        last_sequence: progress.lastSequence,
        delivered: progress.delivered,
        buffered_bytes: progress.bufferedBytes,
        lag_ms: progress.lagMs,
      });
    }
    return streams;
  }

  /**
   * Closes the stream `id` as an admin asked (D49), logged on the stream's own request with who
   * asked; false when this process holds no such stream.
   */
  close(id: string, closedBy: string | null): boolean {
    const listed = this.sessions.get(id);
    if (!listed) return false;
    listed.logger.info({ event_name: 'admin.stream.close.performed', stream_id: id, closed_by: closedBy }, 'Stream closed by an operator');
    listed.session.closeByOperator();
    return true;
  }
}

/**
 * A GET replay resumed at or past its end has nothing left to send: its `to_id` was delivered, or,
 * without one, its end as resolved now. A resume beyond the stream's numbering (D41) is not at the
 * end: the numbering was reset, and the stream replays the new one.
 */
function isResumedAtEnd(request: OpenStreamRequest, session: StreamSession): boolean {
  const resumeAfter = request.resumeAfter as bigint;
  if (request.end.kind === 'sequence' && resumeAfter >= request.end.requested) return true;
  return !session.restartsNumbering && resumeAfter >= BigInt(session.endSequence);
}
