import { ConfigError } from './errors.js';
import type { NotifyItem } from './types.js';

/**
 * How `notifyMany` cuts a list of notifications into batch requests (docs/client.md "Batch
 * notify"): greedily, in order, each batch within an item limit and a byte budget for its JSON
 * array body.
 */

/** The server's default `notification_endpoint.max_batch_items`. */
export const DEFAULT_MAX_BATCH_ITEMS = 1000;

/**
 * The server's default byte limit of a batch body is 16 MiB. The client stays 64 KiB under it so
 * a full batch still fits where a gateway in front of the server counts a little more than the
 * body (its own framing, a header) against the same round number.
 */
export const DEFAULT_MAX_BATCH_BYTES = 16 * 1024 * 1024 - 64 * 1024;

export interface BatchLimits {
  readonly maxItems: number;
  readonly maxBytes: number;
}

/** The request body of one notification, as `POST /api/v1/notification` and each batch item take it. */
export function notificationBody(item: NotifyItem): Record<string, unknown> {
  const body: Record<string, unknown> = { event_type: item.eventType, identifier: item.identifier };
  if (item.payload !== undefined) body.payload = item.payload;
  return body;
}

const encoder = new TextEncoder();

/**
 * UTF-8 bytes of each body's JSON. A notification that JSON cannot carry (a BigInt, a cycle) is
 * refused here, naming its index, before any batch is sent.
 */
export function serialisedSizes(bodies: readonly Record<string, unknown>[]): number[] {
  return bodies.map((body, index) => {
    let json: string;
    try {
      json = JSON.stringify(body);
    } catch (error) {
      throw new ConfigError(`notification ${index} cannot be sent as JSON: ${(error as Error).message}`, { cause: error });
    }
    return encoder.encode(json).length;
  });
}

/** The limits of the options, checked before anything is sent. */
export function checkedLimits(options: { readonly maxBatchItems?: number; readonly maxBatchBytes?: number }): BatchLimits {
  const maxItems = options.maxBatchItems ?? DEFAULT_MAX_BATCH_ITEMS;
  const maxBytes = options.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES;
  if (!Number.isSafeInteger(maxItems) || maxItems < 1)
    throw new ConfigError(`maxBatchItems must be a whole number of at least 1, got ${maxItems}`);
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1)
    throw new ConfigError(`maxBatchBytes must be a whole number of at least 1, got ${maxBytes}`);
  return { maxItems, maxBytes };
}

export interface PlannedBatch {
  /** Index of the first notification of the batch. */
  readonly start: number;
  /** Index after its last. */
  readonly end: number;
  /** Bytes of its body, `[` + the items joined by `,` + `]`, exactly what `JSON.stringify` of the array gives. */
  readonly bytes: number;
}

/**
 * The next batch from `start`: as many notifications as fit both limits, and always at least one,
 * so a notification larger than the budget on its own still goes to the server, whose answer is
 * then its outcome.
 */
export function nextBatch(sizes: readonly number[], start: number, limits: BatchLimits): PlannedBatch {
  let end = start + 1;
  let bytes = 2 + (sizes[start] as number);
  while (end < sizes.length && end - start < limits.maxItems) {
    const withNext = bytes + 1 + (sizes[end] as number);
    if (withNext > limits.maxBytes) break;
    bytes = withNext;
    end += 1;
  }
  return { start, end, bytes };
}

/**
 * The limits to go on with after the server answered `413` to `batch`: a batch over the server's
 * item limit (`BATCH_TOO_MANY_ITEMS`) is cut to half as many items, any other 413 (its byte
 * limit, `PAYLOAD_TOO_LARGE`, or a gateway's) to half as many bytes. The lower limit is kept for
 * the rest of the call, so a server with lower limits costs one refused request per halving, not
 * one per batch.
 */
export function halvedLimits(limits: BatchLimits, batch: PlannedBatch, code: string | undefined): BatchLimits {
  if (code === 'BATCH_TOO_MANY_ITEMS') return { ...limits, maxItems: Math.ceil((batch.end - batch.start) / 2) };
  return { ...limits, maxBytes: Math.max(1, Math.floor(batch.bytes / 2)) };
}
