import type { FastifyReply } from 'fastify';
import { canonicalJson } from '../../json/canonical-json.js';

/** Sends a body with keys sorted (D1). */
export function sendSortedJson(reply: FastifyReply, statusCode: number, body: unknown): FastifyReply {
  return reply.code(statusCode).type('application/json').send(canonicalJson(body));
}

/** Sends a body whose field order is part of the contract (notify success, admin, health; D1). */
export function sendOrderedJson(reply: FastifyReply, statusCode: number, body: Record<string, unknown>): FastifyReply {
  return reply.code(statusCode).type('application/json').send(JSON.stringify(body));
}
