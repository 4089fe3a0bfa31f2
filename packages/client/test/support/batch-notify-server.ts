import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small server that keeps the contract of `POST /api/v1/notification/batch` as the client
 * relies on it (docs/client.md "Batch notify"): a JSON array body; `413 BATCH_TOO_MANY_ITEMS`
 * over its item limit and `413 PAYLOAD_TOO_LARGE` over its byte limit; each item stored or
 * refused on its own, answered in request order under the batch's request id with 200, 207 or
 * 400; a store failure answered as a 5xx error body, or within the results (`207`, or `500`
 * when none was stored) as the server's docs/api.md describes it; an `Idempotency-Key` that covers
 * the whole batch: sent again, the notifications it stored are answered from the first success,
 * the others processed anew, with `Idempotent-Replayed: true` when nothing new was stored. Faults
 * are scripted per request. The real endpoint is tested on the server's side.
 *
 * An item is refused when its identifier has a `refuse` field (`INVALID_NOTIFICATION_REQUEST`,
 * with the server's message for an undeclared field) or when it lacks `event_type`/`identifier`.
 */
export type Fault =
  /** Answer as usual (a placeholder, so a later request can get a fault). */
  | 'answer'
  /** Cut the connection after reading the request, before storing anything. */
  | 'cut-before'
  /** Store the batch, then cut the connection instead of answering. */
  | 'cut-after'
  /** Store the batch, then answer 200 with no result for it. */
  | 'garbled'
  /** Answer this status with the storage error body, storing nothing. */
  | { readonly status: number; readonly retryAfter?: string }
  /** Store the items before this index; the store fails for the rest, answered in the results. */
  | { readonly storeFailsFrom: number };

export interface StoredNotification {
  readonly sequence: number;
  readonly body: Record<string, unknown>;
  readonly key: string | undefined;
}

export interface ReceivedBatch {
  readonly key: string | undefined;
  readonly bytes: number;
  /** Items in the body, or undefined when it was not a JSON array. */
  readonly items: number | undefined;
  readonly contentType: string | undefined;
}

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

type ItemResult = Record<string, unknown> & { readonly index: number };

/** What a key recorded: the batch it was first sent with, and each item it stored, by index. */
interface KeyRecord {
  readonly fingerprint: string;
  readonly stored: Map<number, ItemResult>;
}

const PROCESSED_AT = '2026-12-05T01:00:00Z';

export class BatchNotifyServer {
  maxItems = 1000;
  maxBytes = 16 * 1024 * 1024;
  /** When false, the server ignores `Idempotency-Key` as a server without the contract does. */
  honoursKeys = true;
  faults: Fault[] = [];
  readonly stored: StoredNotification[] = [];
  readonly received: ReceivedBatch[] = [];
  private readonly byKey = new Map<string, KeyRecord>();
  private requests = 0;
  private server: Server | undefined;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
    return this;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server?.closeAllConnections();
      this.server?.close(() => resolve());
    });
  }

  /** Back to an empty store and the default limits, between tests. */
  reset(): void {
    this.maxItems = 1000;
    this.maxBytes = 16 * 1024 * 1024;
    this.honoursKeys = true;
    this.faults = [];
    this.stored.length = 0;
    this.received.length = 0;
    this.byKey.clear();
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const requestId = `00000000-0000-4000-8000-${String(++this.requests).padStart(12, '0')}`;
      const key = this.honoursKeys ? (req.headers['idempotency-key'] as string | undefined) : undefined;
      let items: unknown;
      try {
        items = JSON.parse(raw.toString('utf8'));
      } catch {
        items = undefined;
      }
      this.received.push({
        key: req.headers['idempotency-key'] as string | undefined,
        bytes: raw.length,
        items: Array.isArray(items) ? items.length : undefined,
        contentType: req.headers['content-type'],
      });
      const send = (answer: Answer, headers: Record<string, string> = {}): void => {
        res.writeHead(answer.status, { 'content-type': 'application/json', 'x-request-id': requestId, ...headers });
        res.end(JSON.stringify({ ...answer.body, request_id: requestId }));
      };
      const error = (status: number, code: string, message: string, headers: Record<string, string> = {}): void =>
        send({ status, body: { code, error: code.toLowerCase(), message } }, headers);
      if (req.method !== 'POST' || req.url !== '/api/v1/notification/batch') return error(404, 'NOT_FOUND', 'Route not found');
      if (raw.length > this.maxBytes)
        return error(413, 'PAYLOAD_TOO_LARGE', `Batch too large: ${raw.length} bytes, the limit is ${this.maxBytes}`);
      if (!Array.isArray(items) || items.length === 0) return error(400, 'INVALID_BATCH', 'The body must be a non-empty JSON array');
      if (items.length > this.maxItems)
        return error(413, 'BATCH_TOO_MANY_ITEMS', `Batch has ${items.length} notifications, the limit is ${this.maxItems}`);
      const fault = this.faults.shift();
      if (fault === 'cut-before') return void req.socket.destroy();
      if (typeof fault === 'object' && 'status' in fault) {
        return error(
          fault.status,
          'NOTIFICATION_STORAGE_FAILED',
          'Failed to store notification',
          fault.retryAfter === undefined ? {} : { 'retry-after': fault.retryAfter },
        );
      }
      const fingerprint = raw.toString('utf8');
      const record = key === undefined ? undefined : (this.byKey.get(key) ?? { fingerprint, stored: new Map<number, ItemResult>() });
      if (record !== undefined && record.fingerprint !== fingerprint) {
        return error(422, 'IDEMPOTENCY_KEY_REUSED', 'Idempotency-Key was already used for a different notification');
      }
      const storeFailsFrom = typeof fault === 'object' ? fault.storeFailsFrom : items.length;
      const { answer, storedNow } = this.store(items, key, requestId, record?.stored ?? new Map<number, ItemResult>(), storeFailsFrom);
      if (key !== undefined && record !== undefined && record.stored.size > 0) this.byKey.set(key, record);
      if (fault === 'cut-after') return void req.socket.destroy();
      if (fault === 'garbled') return send({ status: 200, body: { status: 'success', results: [] } });
      send(
        answer,
        key === undefined
          ? {}
          : { 'idempotent-replayed': storedNow === 0 && record !== undefined && record.stored.size > 0 ? 'true' : 'false' },
      );
    });
  }

  /**
   * Each item on its own: answered from `earlier` when the key already stored it, else refused,
   * failed (from `storeFailsFrom` on) or stored, recorded in `earlier` when stored.
   */
  private store(
    items: unknown[],
    key: string | undefined,
    requestId: string,
    earlier: Map<number, ItemResult>,
    storeFailsFrom: number,
  ): { answer: Answer; storedNow: number } {
    let storedNow = 0;
    let storeFailed = false;
    const results = items.map((item, index): ItemResult => {
      const first = earlier.get(index);
      if (first !== undefined) return { ...first, request_id: requestId };
      const body = item as Record<string, unknown> | null;
      const identifier = body?.identifier as Record<string, unknown> | undefined;
      if (typeof body?.event_type !== 'string' || identifier === null || typeof identifier !== 'object') {
        return {
          index,
          code: 'INVALID_REQUEST_SHAPE',
          error: 'invalid_request_shape',
          message: 'Request deserialization failed: missing event_type or identifier',
          request_id: requestId,
        };
      }
      if ('refuse' in identifier) {
        const message = "Unknown field 'refuse' provided for notify operation";
        return {
          index,
          code: 'INVALID_NOTIFICATION_REQUEST',
          details: message,
          error: 'Invalid Notification Request',
          message,
          request_id: requestId,
        };
      }
      if (index >= storeFailsFrom) {
        storeFailed = true;
        return {
          index,
          code: 'NOTIFICATION_STORAGE_FAILED',
          details: 'the store is down',
          error: 'notification_storage_failed',
          message: 'Failed to store notification',
          request_id: requestId,
        };
      }
      this.stored.push({ sequence: this.stored.length + 1, body, key });
      storedNow += 1;
      const result = { index, status: 'success', request_id: requestId, processed_at: PROCESSED_AT };
      earlier.set(index, result);
      return result;
    });
    const stored = results.filter((r) => r.status === 'success').length;
    const status = stored === items.length ? 200 : stored > 0 ? 207 : storeFailed ? 500 : 400;
    const word = status === 200 ? 'success' : status === 207 ? 'partial' : 'error';
    return { answer: { status, body: { status: word, stored, failed: items.length - stored, results } }, storedNow };
  }
}
