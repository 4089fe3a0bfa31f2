import { DecodeError, HttpError } from './errors.js';
import { retryableAnswer, type Exchange } from './notify-retries.js';

/**
 * The answer to one `POST /api/v1/notification/batch` (docs/client.md "Batch notify"): `200`
 * when every item was stored, `207` when some were, `400` with `results` when every item was
 * refused, each with one result per item in request order; `413` when the batch is over one of
 * the server's limits; anything else refuses the batch as a whole.
 */
export type BatchAnswer =
  | {
      readonly kind: 'results';
      readonly results: readonly ItemResult[];
      /** `Idempotent-Replayed` of the answer; undefined when the server does not say. */
      readonly replayed: boolean | undefined;
    }
  /** Over the server's item or byte limit: nothing was stored, a smaller batch may pass. */
  | { readonly kind: 'too_large'; readonly error: HttpError }
  /** Refused as a whole (a 5xx once the retries are spent, a 403, an unexpected status): nothing was stored. */
  | { readonly kind: 'refused'; readonly error: HttpError };

export type ItemResult =
  | { readonly stored: true; readonly status: string; readonly requestId: string; readonly processedAt: string }
  | {
      readonly stored: false;
      readonly code: string | undefined;
      readonly message: string;
      readonly requestId: string | undefined;
      /** Not stored for a reason not its own (`RETRYABLE_ITEM_CODES`): the same batch sent again under its key may store it. */
      readonly retryable: boolean;
    };

/**
 * The item errors that a retry of the batch under the same key may clear, as the same codes do on
 * `notify` (a 5xx, a 409): the store failed for the item, or the key's first attempt is still
 * storing it. The server answers them within the results of a batch that stored others (207), or
 * of one that stored none.
 */
const RETRYABLE_ITEM_CODES = new Set(['NOTIFICATION_STORAGE_FAILED', 'IDEMPOTENCY_KEY_IN_PROGRESS']);

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function itemResult(value: unknown, index: number, batchRequestId: string | undefined): ItemResult {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new DecodeError(`notify batch: result ${index} is not a JSON object`);
  const result = value as Record<string, unknown>;
  if (result.index !== index)
    throw new DecodeError(
      `notify batch: result ${index} has index ${JSON.stringify(result.index)}; the results must follow the request's order`,
    );
  const requestId = typeof result.request_id === 'string' ? result.request_id : batchRequestId;
  if (result.status === 'success' && typeof result.processed_at === 'string') {
    if (requestId === undefined) throw new DecodeError('notify batch: the response carries no request id');
    return { stored: true, status: result.status, requestId, processedAt: result.processed_at };
  }
  const code = typeof result.code === 'string' ? result.code : undefined;
  const message = typeof result.message === 'string' ? result.message : code;
  if (message === undefined) throw new DecodeError(`notify batch: result ${index} is neither a success nor an error`);
  return { stored: false, code, message, requestId, retryable: code !== undefined && RETRYABLE_ITEM_CODES.has(code) };
}

/**
 * When the batch is worth sending again under its key: what makes a single notify so (a 5xx, a
 * 409), or results in which some item failed for a reason a retry may clear.
 */
export function retryableBatchAnswer(exchange: Exchange): boolean {
  if (retryableAnswer(exchange)) return true;
  if (exchange.response.status !== 207 && exchange.response.status !== 400) return false;
  const results = parseObject(exchange.text)?.results;
  if (!Array.isArray(results)) return false;
  return results.some((result: unknown) => {
    const code = (result as { code?: unknown } | null)?.code;
    return typeof code === 'string' && RETRYABLE_ITEM_CODES.has(code);
  });
}

/**
 * Reads the answer to a batch of `count` notifications. A `200` or `207` that cannot be read
 * throws `DecodeError`: the server may have stored the batch, and the caller must not take it
 * for refused.
 */
export function readBatchAnswer(exchange: Exchange, count: number): BatchAnswer {
  const { response, text } = exchange;
  const headerRequestId = response.headers.get('x-request-id') ?? undefined;
  if (response.status === 413) return { kind: 'too_large', error: new HttpError(413, text, headerRequestId) };
  const refused = (): BatchAnswer => ({ kind: 'refused', error: new HttpError(response.status, text, headerRequestId) });
  if (response.status !== 200 && response.status !== 207 && response.status !== 400) return refused();
  const body = parseObject(text);
  // A 400 without results is about the request as a whole (its key, its form): nothing was stored.
  if (response.status === 400 && !Array.isArray(body?.results)) return refused();
  if (body === undefined) throw new DecodeError('notify batch: the response is not a JSON object');
  if (!Array.isArray(body.results)) throw new DecodeError('notify batch: the response has no results');
  const results = body.results as unknown[];
  if (results.length !== count) throw new DecodeError(`notify batch: ${results.length} results for ${count} notifications`);
  const batchRequestId = headerRequestId ?? (typeof body.request_id === 'string' ? body.request_id : undefined);
  const replayed = response.headers.get('idempotent-replayed');
  return {
    kind: 'results',
    results: results.map((result, index) => itemResult(result, index, batchRequestId)),
    replayed: replayed === null ? undefined : replayed.trim().toLowerCase() === 'true',
  };
}
