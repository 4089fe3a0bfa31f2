import type { Logger } from 'pino';
import type { NotificationBackend } from '../backend/backend.js';
import type { Clock } from '../time/clock.js';
import { SharedFilters } from '../filter/shared-filters.js';
import { compileWatchFilter, type WatchSelection } from '../filter/watch-filter.js';
import type { EventSchema } from '../schema/event-schema.js';
import type { StoredIdentityReader } from '../schema/stored-identifier.js';
import type { CloudEventRenderer } from './cloudevent.js';
import type { CloseReason } from './frames.js';
import type { ReplayEndRequest, StartCursorRequest } from './stream-range.js';
import type { StreamSettings, StreamTelemetry } from './stream-request.js';
import type { ConnectionGuards } from './connection-watch.js';
import { DueQueue } from './due-queue.js';
import { StreamSession, type StreamSchedule } from './stream-session.js';
import type { StreamSink } from './stream-sink.js';

export interface StreamSupervisorDependencies {
  readonly backend: NotificationBackend;
  readonly identities: StoredIdentityReader;
  readonly renderer: CloudEventRenderer;
  readonly clock: Clock;
  readonly settings: StreamSettings;
  readonly logger: Logger;
  /** The process's stream byte budget and stall watchdog (sse-connection.ts). */
  readonly guards: ConnectionGuards;
  /** Records a live delivery's lag from its acceptance (storage time, ns). */
  readonly deliveryLag: (acceptedAtNs: bigint) => void;
}

export interface OpenStreamRequest {
  readonly endpoint: 'watch' | 'replay';
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
  /** A GET stream (docs/design/rules/browser.md §1): its frames carry ids; see `StreamRequest.browser`. */
  readonly browser?: { readonly eventType: string };
  /**
   * A GET replay's `Last-Event-ID` sequence: when it is at or past the replay's end, resolved at
   * setup as for any replay, there is nothing left to send and no stream is opened.
   */
  readonly resumeAfter?: bigint;
}

/** `finished`: a GET replay resumed at or past its end; the caller answers 204 (docs/design/rules/browser.md §1). */
export type OpenOutcome = 'opened' | 'finished';

/**
 * Opens streams and knows every open one, so shutdown can close them all with `server_shutdown`
 * (docs/design/rules/streaming.md §8.4) and tests can check that nothing outlives its stream.
 */
export class StreamSupervisor {
  private readonly sessions = new Set<StreamSession>();
  private closingReason: CloseReason | undefined;
  /** Streams with the same filter evaluate it once per notification (shared-filters.ts). */
  private readonly filters = new SharedFilters();

  private readonly schedule: StreamSchedule;

  constructor(private readonly deps: StreamSupervisorDependencies) {
    const { clock, settings } = deps;
    this.schedule = {
      heartbeats: new DueQueue(clock, settings.heartbeatIntervalSec * 1000, true, (session) => session.heartbeatDue()),
      lifetimes: new DueQueue(clock, settings.connectionMaxDurationSec * 1000, false, (session) =>
        session.close('max_duration_reached'),
      ),
    };
  }

  get openStreams(): number {
    return this.sessions.size;
  }

  /**
   * Sets up the backend side, then has the transport take the response over (`takeOver`, called
   * only when a stream will be sent). Rejects (before anything is sent) when the backend cannot
   * set the stream up; the caller answers with an HTTP error.
   */
  async open(request: OpenStreamRequest, takeOver: () => StreamSink): Promise<OpenOutcome> {
    const { logger, ...opened } = request;
    const { selection, schema } = opened;
    const filter = this.filters.acquire(selection, schema, () => compileWatchFilter(selection, this.deps.identities));
    const session = new StreamSession(
      { ...opened, predicate: filter.predicate },
      {
        backend: this.deps.backend,
        renderer: this.deps.renderer,
        clock: this.deps.clock,
        settings: this.deps.settings,
        logger,
        guards: this.deps.guards,
        schedule: this.schedule,
        deliveryLag: this.deps.deliveryLag,
        onReleased: (released) => {
          this.sessions.delete(released);
          filter.release();
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
    this.sessions.add(session);
    session.begin(takeOver());
    // A stream opened while shutting down consists of its opening frame and the shutdown close (docs/design/rules/streaming.md §8.1).
    if (this.closingReason) session.close(this.closingReason);
    return 'opened';
  }

  /** Ends every open stream with its final frame. */
  closeAll(reason: CloseReason): void {
    this.closingReason = reason;
    for (const session of [...this.sessions]) session.close(reason);
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
