import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';

/**
 * A request's logger as the pino logger it is. buildApp hands fastify a pino logger and a child
 * factory that makes pino children (app.ts), so every `request.log` is one; fastify types it as its
 * own narrower interface, which lacks `isLevelEnabled` and is not the object `addLogContext` keys
 * its context on. The one place that says so, instead of a cast at each use.
 */
export function requestLog(request: FastifyRequest): Logger {
  return request.log as Logger;
}
