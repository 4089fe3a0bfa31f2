import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { ApiError } from './api-error.js';
import { internalError, methodNotAllowedError, notFoundError, payloadTooLargeError } from './error-bodies.js';
import { sendSortedJson } from './json-reply.js';

/**
 * The one place error bodies are written (design.md "Errors"): `ApiError`s with the request id
 * added, fastify's own 4xx mapped to our shape, anything else a logged 500 without internals.
 * Also answers unknown paths with 404 and known paths with the wrong method with 405 (D3).
 */
export function registerErrorHandling(app: FastifyInstance, options: { maxBodyBytes: number }): void {
  const knownRoutes = FindMyWay();
  const methodsByPath = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      knownRoutes.on(method as HTTPMethod, route.url, () => undefined);
      const set = methodsByPath.get(route.url) ?? new Set<string>();
      set.add(method);
      methodsByPath.set(route.url, set);
    }
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError = toApiError(error, options.maxBodyBytes);
    if (apiError.statusCode >= 500 && !(error instanceof ApiError)) {
      request.log.error({ event_name: 'http.request.unhandled_error', err: error }, 'Unhandled error');
    }
    return sendApiError(request, reply, apiError);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = [...new Set([...methodsByPath.entries()].flatMap(([, methods]) => [...methods]))]
      .filter((method) => method !== request.method && knownRoutes.find(method as HTTPMethod, path) !== null)
      .sort();
    const error = allowed.length > 0 ? methodNotAllowedError(request.method, path, allowed) : notFoundError(request.method, path);
    return sendApiError(request, reply, error);
  });
}

export function sendApiError(request: FastifyRequest, reply: FastifyReply, error: ApiError): FastifyReply {
  reply.headers(error.headers);
  return sendSortedJson(reply, error.statusCode, { ...error.body, request_id: request.id });
}

function toApiError(error: FastifyError, maxBodyBytes: number): ApiError {
  if (error instanceof ApiError) return error;
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || error.statusCode === 413) return payloadTooLargeError(maxBodyBytes);
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return new ApiError(error.statusCode, { code: 'BAD_REQUEST', error: 'bad_request', message: error.message });
  }
  return internalError();
}
