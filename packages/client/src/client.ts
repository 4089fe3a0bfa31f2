import { retryableBatchAnswer } from './batch-answer.js';
import { systemClock, type Clock } from './clock.js';
import { DecodeError, HttpError } from './errors.js';
import { plaintextRefusal, Transport } from './http.js';
import { checkedIdempotencyKey } from './idempotency-key.js';
import { notificationBody } from './notify-batches.js';
import { notifyInBatches } from './notify-many.js';
import { retryableAnswer, sendWithRetries, type Exchange } from './notify-retries.js';
import { defaultFetch, type DefaultFetch } from './transport/default-fetch.js';
import {
  decodeStreamClosed,
  decodeStreamList,
  streamListQuery,
  type StreamClosed,
  type StreamList,
  type StreamListFilter,
} from './open-streams.js';
import { NotificationStream } from './stream/notification-stream.js';
import type {
  AdminResult,
  AvisoClientOptions,
  NotifyItem,
  NotifyManyOptions,
  NotifyOutcome,
  NotifyRequest,
  NotifyResult,
  SchemaList,
  WatchRequest,
} from './types.js';
import { isSecureOrLoopback, parseBaseUrl } from './url.js';

const DEFAULT_TIMEOUT_MS = 30_000;

function decodeJson(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new DecodeError(`${what}: the response is not JSON`, { cause: error });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new DecodeError(`${what}: the response is not a JSON object`);
  return value as Record<string, unknown>;
}

/** The error body's `code`, when the answer is a JSON error. */
function codeOf(exchange: Exchange): string | undefined {
  if (exchange.response.status < 400) return undefined;
  try {
    const body = JSON.parse(exchange.text) as { code?: unknown };
    return typeof body.code === 'string' ? body.code : undefined;
  } catch {
    return undefined;
  }
}

function requestIdOf(response: Response, body: Record<string, unknown>): string {
  const header = response.headers.get('x-request-id');
  if (header) return header;
  if (typeof body.request_id === 'string') return body.request_id;
  throw new DecodeError('the response carries no request id');
}

/** A client of one aviso server (docs/design/rules/client.md §2). */
export class AvisoClient {
  readonly baseUrl: URL;
  /** The base URL as given, for the resume key (the aviso client hashes its own normalisation of it). */
  readonly baseUrlInput: string;
  readonly admin: AvisoAdmin;
  /** @internal shared with the streams */
  readonly transport: Transport;
  /** @internal */
  readonly clock: Clock;
  /** `AvisoClientOptions.flushCursorOnExit`. */
  readonly flushCursorOnExit: boolean;
  private readonly timeoutMs: number;
  private readonly shared: DefaultFetch | undefined;
  /** Set once an answer of this server proved it deduplicates notifies by `Idempotency-Key`. */
  private honoursIdempotency = false;

  constructor(options: AvisoClientOptions) {
    this.baseUrl = parseBaseUrl(options.baseUrl);
    this.baseUrlInput = options.baseUrl;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.clock = options.clock ?? systemClock;
    this.flushCursorOnExit = options.flushCursorOnExit === true;
    this.shared =
      options.fetch === undefined
        ? defaultFetch({
            ...(options.ca === undefined ? {} : { ca: options.ca }),
            ...(options.dangerAcceptInvalidCerts === undefined ? {} : { dangerAcceptInvalidCerts: options.dangerAcceptInvalidCerts }),
          })
        : undefined;
    this.transport = new Transport({
      baseUrl: this.baseUrl,
      auth: options.auth,
      userAgent: options.userAgent,
      fetch: options.fetch ?? this.shared!.fetch,
    });
    this.admin = new AvisoAdmin(this);
  }

  /**
   * Throws the `AuthError` every request would raise when the client's credential was discovered
   * (environment, a file) and the base URL is neither https nor loopback; a caller can stop before
   * doing anything else.
   */
  assertCredentialAllowed(): void {
    const auth = this.transport.options.auth;
    if (auth?.discovered && !isSecureOrLoopback(this.baseUrl)) throw plaintextRefusal(auth, this.baseUrl);
  }

  /**
   * Publishes one notification with an `Idempotency-Key`. Retried with the same key (cut, timeout,
   * 5xx, 409) only when the server is known to deduplicate by it: an earlier answer of this server
   * carried `Idempotent-Replayed`, or `request.retry`. Otherwise never sent twice (it could be stored
   * twice), except after a 401 refresh.
   */
  async notify(request: NotifyRequest): Promise<NotifyResult> {
    const idempotencyKey = checkedIdempotencyKey(request.idempotencyKey);
    const { response, text } = await this.sendIdempotent(
      'api/v1/notification',
      notificationBody(request),
      idempotencyKey,
      request.retry === true,
      request.signal,
    );
    if (response.status !== 200) throw new HttpError(response.status, text, response.headers.get('x-request-id') ?? undefined);
    const json = decodeJson(text, 'notify');
    if (typeof json.status !== 'string' || typeof json.processed_at !== 'string')
      throw new DecodeError('notify: unexpected response shape');
    const replayed = response.headers.get('idempotent-replayed');
    return {
      status: json.status,
      requestId: requestIdOf(response, json),
      processedAt: json.processed_at,
      idempotencyKey,
      replayed: replayed === null ? undefined : replayed.trim().toLowerCase() === 'true',
    };
  }

  /**
   * Publishes many notifications through `POST /api/v1/notification/batch` (docs/client.md "Batch
   * notify"): in order, in batches of at most `maxBatchItems` notifications and `maxBatchBytes`
   * bytes of JSON, each batch under its own `Idempotency-Key` and retried with it as `notify`
   * is. Resolves with one outcome per notification, in the order given; rejects only for options
   * or a notification that cannot be sent at all (`ConfigError`), before anything is sent.
   */
  notifyMany(notifications: readonly NotifyItem[], options: NotifyManyOptions = {}): Promise<NotifyOutcome[]> {
    return notifyInBatches(notifications, options, (bodies, idempotencyKey) =>
      this.sendIdempotent(
        'api/v1/notification/batch',
        bodies,
        idempotencyKey,
        options.retry === true,
        options.signal,
        retryableBatchAnswer,
      ),
    );
  }

  /**
   * One notify or batch under its `Idempotency-Key`, retried with that key only where it is known
   * to be safe (`retry`, or this server has shown it deduplicates), learning the latter from the
   * answers: `Idempotent-Replayed`, or the 409 of a key still in flight. `retryable` says which
   * answers are worth sending again (a 5xx or a 409 by default).
   */
  private sendIdempotent(
    path: string,
    body: unknown,
    idempotencyKey: string,
    retry: boolean,
    signal: AbortSignal | undefined,
    retryable: (exchange: Exchange) => boolean = retryableAnswer,
  ): Promise<Exchange> {
    const send = async (): Promise<Exchange> => {
      const exchange = await this.transport.exchange('POST', path, body, this.timeoutMs, signal, { 'idempotency-key': idempotencyKey });
      if (exchange.response.headers.has('idempotent-replayed') || codeOf(exchange) === 'IDEMPOTENCY_KEY_IN_PROGRESS')
        this.honoursIdempotency = true;
      return exchange;
    };
    return sendWithRetries(send, () => retry || this.honoursIdempotency, this.clock, signal, retryable);
  }

  /** Every schema (`schema()`) or one (`schema("mars")`), as the server's public view. */
  schema(): Promise<SchemaList>;
  schema(eventType: string): Promise<Record<string, unknown>>;
  async schema(eventType?: string): Promise<Record<string, unknown>> {
    const path = eventType === undefined ? 'api/v1/schema' : `api/v1/schema/${encodeURIComponent(eventType)}`;
    const { response, text } = await this.transport.exchange('GET', path, undefined, this.timeoutMs);
    if (response.status !== 200) throw new HttpError(response.status, text, response.headers.get('x-request-id') ?? undefined);
    return decodeJson(text, 'schema');
  }

  /** Opens a supervised stream; iterate it with `for await`. */
  watch(request: WatchRequest): NotificationStream {
    return new NotificationStream(this, request);
  }

  /** Releases the client's connections (open streams should be closed first). */
  async close(): Promise<void> {
    await this.shared?.close();
  }

  /** @internal An admin request answered `200` with a JSON object, and that answer's request id. */
  async adminExchange(method: string, path: string, body?: unknown): Promise<{ json: Record<string, unknown>; requestId: string }> {
    const { response, text } = await this.transport.exchange(method, path, body, this.timeoutMs);
    if (response.status !== 200) throw new HttpError(response.status, text, response.headers.get('x-request-id') ?? undefined);
    const json = decodeJson(text, 'admin');
    return { json, requestId: requestIdOf(response, json) };
  }

  /** @internal */
  async adminCall(method: string, path: string, body?: unknown): Promise<AdminResult> {
    const { json, requestId } = await this.adminExchange(method, path, body);
    if (typeof json.success !== 'boolean' || typeof json.message !== 'string') throw new DecodeError('admin: unexpected response shape');
    return {
      success: json.success,
      message: json.message,
      requestId,
      ...(typeof json.notification_id === 'string' ? { notificationId: json.notification_id } : {}),
    };
  }
}

/** Admin operations; each throws `HttpError` on a non-200 answer. */
export class AvisoAdmin {
  constructor(private readonly client: AvisoClient) {}

  wipeStream(name: string): Promise<AdminResult> {
    return this.client.adminCall('DELETE', 'api/v1/admin/wipe/stream', { stream_name: name });
  }

  wipeAll(): Promise<AdminResult> {
    return this.client.adminCall('DELETE', 'api/v1/admin/wipe/all');
  }

  /** `id` is `<event_type>@<sequence>`, for example `mars@42`. */
  deleteNotification(id: string): Promise<AdminResult> {
    return this.client.adminCall('DELETE', `api/v1/admin/notification/${encodeURIComponent(id)}`);
  }

  /**
   * The open streams of the deployment (`GET /api/v1/admin/streams`): every process that answers
   * in time, filtered by event type and user, at most `limit` of them, with the counts per event type.
   */
  async listStreams(filter: StreamListFilter = {}): Promise<StreamList> {
    const { json, requestId } = await this.client.adminExchange('GET', `api/v1/admin/streams${streamListQuery(filter)}`);
    return decodeStreamList(json, requestId);
  }

  /**
   * Ends one open stream, on whichever process holds it (`DELETE /api/v1/admin/streams/{id}`): its
   * client gets `end_of_stream` with the cause `operator_closed` and reconnects from its cursor.
   * `id` is the stream's request id. A stream no answering process holds is an `HttpError` 404.
   */
  async closeStream(id: string): Promise<StreamClosed> {
    const { json, requestId } = await this.client.adminExchange('DELETE', `api/v1/admin/streams/${encodeURIComponent(id)}`);
    return decodeStreamClosed(json, requestId);
  }
}
