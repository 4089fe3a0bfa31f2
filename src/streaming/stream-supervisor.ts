import type { FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import type { NotificationBackend } from '../backend/backend.js';
import type { Clock } from '../clock.js';
import { streamCorsHeaders } from '../http/cors.js';
import { compileWatchFilter, type WatchSelection } from '../filter/watch-filter.js';
import type { StoredIdentityReader } from '../schema/stored-identifier.js';
import type { CloudEventRenderer } from './cloudevent.js';
import type { ReplayEndRequest } from './end-point.js';
import type { CloseReason } from './frames.js';
import type { StartCursorRequest } from './start-cursor.js';
import { StreamSession, type StreamSettings, type StreamTelemetry } from './stream-session.js';

export interface StreamSupervisorDependencies {
  readonly backend: NotificationBackend;
  readonly identities: StoredIdentityReader;
  readonly renderer: CloudEventRenderer;
  readonly clock: Clock;
  readonly settings: StreamSettings;
  readonly logger: Logger;
}

export interface OpenStreamRequest {
  readonly endpoint: 'watch' | 'replay';
  readonly selection: WatchSelection;
  readonly cursor: StartCursorRequest;
  readonly end: ReplayEndRequest;
  readonly quota: number;
  readonly telemetry: StreamTelemetry;
}

/**
 * Opens streams and knows every open one, so shutdown can close them all with `server_shutdown`
 * (streaming.md §8.4) and tests can check that nothing outlives its stream.
 */
export class StreamSupervisor {
  private readonly sessions = new Set<StreamSession>();
  private closingReason: CloseReason | undefined;

  constructor(private readonly deps: StreamSupervisorDependencies) {}

  get openStreams(): number {
    return this.sessions.size;
  }

  /**
   * Sets up the backend side, then takes over the response. Rejects (before anything is sent)
   * when the backend cannot set the stream up; the caller answers with an HTTP error.
   */
  async open(reply: FastifyReply, request: OpenStreamRequest): Promise<void> {
    const session = new StreamSession(
      {
        ...request,
        requestId: reply.request.id,
        predicate: compileWatchFilter(request.selection, this.deps.identities),
      },
      {
        backend: this.deps.backend,
        renderer: this.deps.renderer,
        clock: this.deps.clock,
        settings: this.deps.settings,
        logger: reply.log as Logger,
        onReleased: (released) => this.sessions.delete(released),
      },
    );
    await session.setup();
    this.sessions.add(session);
    reply.hijack();
    session.begin(reply.raw, streamCorsHeaders(reply.request, reply));
    // A stream opened while shutting down consists of its opening frame and the shutdown close (§8.1).
    if (this.closingReason) session.close(this.closingReason);
  }

  /** Ends every open stream with its final frame. */
  closeAll(reason: CloseReason): void {
    this.closingReason = reason;
    for (const session of [...this.sessions]) session.close(reason);
  }
}
