import type { FastifyError } from 'fastify';
import { AuthError } from '../../auth/auth-error.js';
import { NotificationTooLargeError } from '../../backend/backend.js';
import type { ConflictReason } from '../../idempotency/idempotency-telemetry.js';
import { IdempotencyConflictError } from '../../idempotency/store-once.js';
import type { NotificationStatus } from '../../metrics/aviso-metrics.js';
import { IdentifierError } from '../../schema/identifier-error.js';
import { apiError, ApiError } from './api-error.js';
import type { EndpointName } from './endpoint.js';
import {
  authErrorResponse,
  idempotencyKeyInProgressError,
  idempotencyKeyReusedError,
  internalError,
  notificationTooLargeError,
  payloadTooLargeError,
  storageFailedError,
  streamInitializationFailedError,
  validationError,
} from './error-bodies.js';
import { errorCodeEntry } from './error-codes.js';
import { StartCursorError } from './request-range.js';

/**
 * The one place where the domains' errors become API answers (docs/design/architecture.md
 * "Errors"): the routes and the error handler ask here, and the table (error-codes.ts) gives each
 * answer its status and message. The domains raise their own typed errors and know nothing of HTTP.
 */

/**
 * The answer a refusal gets, or `undefined` for an error that is not one (a bug: the error handler
 * answers it 500 and logs it whole). `endpoint` names the request whose content was judged: an
 * identifier or a start cursor the domain refused is that endpoint's validation 400.
 */
export function refusalOf(error: unknown, endpoint?: EndpointName): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (error instanceof AuthError) return authErrorResponse(error);
  if (error instanceof IdempotencyConflictError) return idempotencyConflictAnswer(error.reason);
  if (endpoint !== undefined) {
    if (error instanceof IdentifierError) return validationError(endpoint, error.message, error.details);
    if (error instanceof StartCursorError) return validationError(endpoint, error.message);
  }
  return undefined;
}

/** `refusalOf`, for a `catch` that passes every other error on as it is. */
export function asRefusal(error: unknown, endpoint?: EndpointName): unknown {
  return refusalOf(error, endpoint) ?? error;
}

/** An `Idempotency-Key` held by another notification (422) or by a request still running (409). */
export function idempotencyConflictAnswer(reason: ConflictReason): ApiError {
  return reason === 'reused' ? idempotencyKeyReusedError() : idempotencyKeyInProgressError();
}

/** A store step's failure as notify answers it: 413 for a notification too large for the backend, else 500; batch notify answers each of its items so. */
export function storeFailureAnswer(error: unknown): ApiError {
  const refusal = refusalOf(error);
  if (refusal) return refusal;
  if (error instanceof NotificationTooLargeError) return notificationTooLargeError(error.message);
  return storageFailedError(error instanceof Error ? error.message : String(error));
}

/** The backend could not set a stream up: the 500 that names the stream's topic. */
export function streamSetupFailureAnswer(error: unknown, topic: string): ApiError {
  return streamInitializationFailedError(error instanceof Error ? error.message : String(error), topic);
}

/** How notify counts a failure: refused by policy (`rejected`, a flag of the table) or anything else (`error`). */
export function notificationStatus(error: unknown): NotificationStatus {
  const refusal = refusalOf(error);
  return refusal && errorCodeEntry(refusal.body.code).rejected === true ? 'rejected' : 'error';
}

/**
 * What the error handler sends for anything a route threw: a refusal as it is, fastify's own
 * errors in the API's shape (`maxBodyBytes`: the route's body limit), anything else a 500 without
 * internals.
 */
export function handlerAnswer(error: FastifyError, maxBodyBytes: number): ApiError {
  const refusal = refusalOf(error);
  if (refusal) return refusal;
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || error.statusCode === 413) return payloadTooLargeError(maxBodyBytes);
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    // fastify's other refusals of a request (an empty or unreadable body) keep their status.
    return apiError('BAD_REQUEST', [error.message], { status: error.statusCode });
  }
  return internalError();
}
