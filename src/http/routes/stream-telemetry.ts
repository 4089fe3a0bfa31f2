import type { AvisoMetrics, SseRoute } from '../../metrics/aviso-metrics.js';
import type { StreamEndpoint } from '../../schema/watch-identifier.js';
import type { Frame, GapScope } from '../../streaming/frames.js';
import type { SlowConsumerTrigger, StreamTelemetry } from '../../streaming/stream-request.js';

/**
 * What one stream reports (docs/design/rules/operations.md §3.3.4), bound to its route and event type. Counted once
 * everything before backend setup succeeded: active +1 and total +1 now, active −1 and the
 * duration observed when the stream is released (or setup fails). One object per stream, not a
 * closure per event; the counter of notification frames is bound at the first one, so a
 * delivery costs an increment and no label lookup (the series still appears on first use).
 */
export class RouteStreamTelemetry implements StreamTelemetry {
  private readonly route: SseRoute;
  private readonly openedAt = process.hrtime.bigint();
  private notificationCounter: (() => void) | undefined;
  private released_ = false;

  constructor(
    private readonly metrics: AvisoMetrics,
    endpoint: StreamEndpoint,
    private readonly eventType: string,
    private readonly username: string | undefined,
  ) {
    this.route = endpoint === 'watch' ? '/api/v1/watch' : '/api/v1/replay';
    metrics.streamOpened(this.route, eventType, username);
  }

  frameSent(kind: Frame['kind']): void {
    if (kind === 'notification') {
      this.notificationCounter ??= this.metrics.notificationCounter(this.route, this.eventType);
      this.notificationCounter();
    } else if (kind === 'error') {
      this.metrics.streamErrorSent(this.route, this.eventType);
    }
  }

  slowConsumerClosed(trigger: SlowConsumerTrigger): void {
    this.metrics.slowConsumerClosed(this.route, trigger);
  }

  streamReset(): void {
    this.metrics.streamReset(this.route);
  }

  tokenExpiryClosed(): void {
    this.metrics.tokenExpiryClosed(this.route);
  }

  historyGap(scope: GapScope): void {
    this.metrics.historyGap(this.route, scope);
  }

  sequenceReset(): void {
    this.metrics.sequenceReset(this.route);
  }

  released(): void {
    if (this.released_) return;
    this.released_ = true;
    this.metrics.streamClosed(this.route, this.eventType, this.username, Number(process.hrtime.bigint() - this.openedAt) / 1e9);
  }
}
