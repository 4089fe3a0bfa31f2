import { readBatchAnswer, type BatchAnswer, type ItemResult } from './batch-answer.js';
import { AuthError, HttpError, parseErrorBody } from './errors.js';
import { checkedIdempotencyKey } from './idempotency-key.js';
import type { Exchange } from './notify-retries.js';
import { checkedLimits, halvedLimits, nextBatch, notificationBody, serialisedSizes } from './notify-batches.js';
import type { NotifyFailed, NotifyItem, NotifyManyOptions, NotifyOutcome } from './types.js';

/**
 * Sends one batch body under its `Idempotency-Key`, with the retries `notify` would make (same
 * key each time), and resolves with the last exchange.
 */
export type SendBatch = (bodies: readonly Record<string, unknown>[], idempotencyKey: string) => Promise<Exchange>;

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function requestIdOf(error: unknown): string | undefined {
  const requestId = (error as { requestId?: unknown } | null)?.requestId;
  return typeof requestId === 'string' ? requestId : undefined;
}

function failure(index: number, reason: NotifyFailed['reason'], message: string, error: unknown): NotifyFailed {
  return {
    index,
    stored: false,
    reason,
    code: error instanceof HttpError ? error.code : undefined,
    message,
    requestId: requestIdOf(error),
    error,
  };
}

/**
 * An exception of the send. A refused credential (a 401 after the refresh, or a discovered one the
 * client would not send in the clear) means the server did not act on the batch; anything else
 * (a cut, a timeout, an unreadable answer, an abort) leaves it unknown whether it was stored.
 */
function sendFailure(index: number, error: unknown): NotifyFailed {
  return failure(index, error instanceof AuthError ? 'failed' : 'unanswered', describe(error), error);
}

function outcomeOf(result: ItemResult, index: number, idempotencyKey: string, replayed: boolean | undefined): NotifyOutcome {
  if (!result.stored) {
    return {
      index,
      stored: false,
      reason: result.retryable ? 'failed' : 'refused',
      code: result.code,
      message: result.message,
      requestId: result.requestId,
    };
  }
  return {
    index,
    stored: true,
    status: result.status,
    requestId: result.requestId,
    processedAt: result.processedAt,
    idempotencyKey,
    replayed,
  };
}

/**
 * `AvisoClient.notifyMany` (docs/client.md "Batch notify"): sends the notifications in order, in
 * batches within the limits, one batch at a time, and gives one outcome per notification in the
 * order given. A `413` halves the batch and the limits for the rest of the call; a single
 * notification the server will not take even alone is refused and the next ones go on. A batch
 * that fails as a whole, or in which the store failed for some notifications, ends the call: the
 * later ones are not sent, so what was stored is always in the order given (a caller who sends
 * the rest again does not put them behind notifications that came after them).
 */
export async function notifyInBatches(
  notifications: readonly NotifyItem[],
  options: NotifyManyOptions,
  send: SendBatch,
): Promise<NotifyOutcome[]> {
  let limits = checkedLimits(options);
  const bodies = notifications.map(notificationBody);
  const sizes = serialisedSizes(bodies);
  const outcomes: NotifyOutcome[] = [];
  let start = 0;
  /** Fails the notifications from `start` to `end` with `failed`, and moves on past them. */
  const failUntil = (end: number, failed: (index: number) => NotifyFailed): void => {
    for (; start < end; start++) outcomes.push(failed(start));
  };
  /** Every notification from `start` on is not sent. The code and request id of what stopped the call are not theirs. */
  const notSentFromHere = (cause: unknown, why: string): void => {
    for (let index = start; index < bodies.length; index++) {
      outcomes.push({
        index,
        stored: false,
        reason: 'not_sent',
        code: undefined,
        message: `not sent: ${why}`,
        requestId: undefined,
        ...(cause === undefined ? {} : { error: cause }),
      });
    }
  };
  while (start < bodies.length) {
    if (options.signal?.aborted) {
      const reason: unknown = options.signal.reason;
      notSentFromHere(reason, describe(reason));
      break;
    }
    const batch = nextBatch(sizes, start, limits);
    const count = batch.end - batch.start;
    const idempotencyKey = checkedIdempotencyKey(undefined);
    let answer: BatchAnswer;
    try {
      answer = readBatchAnswer(await send(bodies.slice(batch.start, batch.end), idempotencyKey), count);
    } catch (error) {
      failUntil(batch.end, (index) => sendFailure(index, error));
      notSentFromHere(error, 'an earlier batch failed');
      break;
    }
    if (answer.kind === 'too_large' && count > 1) {
      limits = halvedLimits(limits, batch, answer.error.code);
      continue;
    }
    if (answer.kind === 'too_large') {
      // Too large even alone: the server's refusal of this one notification, as `notify` would get it.
      const error = answer.error;
      const message = parseErrorBody(error.body).message ?? error.message;
      failUntil(batch.end, (index) => ({ index, stored: false, reason: 'refused', code: error.code, message, requestId: error.requestId }));
      continue;
    }
    if (answer.kind === 'refused') {
      const error = answer.error;
      failUntil(batch.end, (index) => failure(index, 'failed', error.message, error));
      notSentFromHere(error, 'an earlier batch failed');
      break;
    }
    for (const [offset, result] of answer.results.entries())
      outcomes.push(outcomeOf(result, batch.start + offset, idempotencyKey, answer.replayed));
    start = batch.end;
    // The store failed for some of the batch (and the retries, if allowed, are spent): the call
    // ends here as after a batch that failed whole, so what is stored stays in order.
    if (answer.results.some((result) => !result.stored && result.retryable)) {
      notSentFromHere(undefined, 'an earlier batch failed');
      break;
    }
  }
  return outcomes;
}
