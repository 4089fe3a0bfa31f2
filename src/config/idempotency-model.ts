import Type, { type Static } from 'typebox';
import { parseDuration } from './units.js';

/**
 * The `idempotency` section (docs/api.md "Idempotent notify"): how long a notify's `Idempotency-Key`
 * is remembered, and how many keys the in-memory backend keeps. Part of the configuration model
 * (src/config/model.ts), kept here so that file stays one thing per section.
 */

/** `idempotency.window` bounds, in seconds: below 1 s a retry could never land inside it; 24 h bounds the record store. */
const IDEMPOTENCY_WINDOW_MIN_SEC = 1;
const IDEMPOTENCY_WINDOW_MAX_SEC = 86_400;

export const IdempotencySchema = Type.Object(
  {
    window: Type.String({
      default: '2m',
      description:
        "How long the first success of an `Idempotency-Key` is remembered, counted from that success: a retry inside it is answered from the first and stores nothing, a retry after it stores again. A duration literal (`30s`, `2m`, `1h`), 1s to 24h. On JetStream it is also the TTL of the key-value bucket and every stream's `duplicate_window` (a stream whose own `max_age` is shorter logs a startup warning naming the event type).",
    }),
    in_memory_max_keys: Type.Integer({
      minimum: 0,
      default: 100000,
      description:
        'Keys the in-memory backend remembers at once; when full, the oldest goes first (counted by `aviso_idempotency_evictions_total`). > 0. Not used with JetStream, whose key-value bucket holds every key for the window.',
    }),
  },
  {
    default: {},
    description:
      'The `Idempotency-Key` of `POST /api/v1/notification` and of batch notify (`POST /api/v1/notification/batch`). Optional; each field has its own default.',
  },
);

export type IdempotencyConfig = Static<typeof IdempotencySchema>;

/** `idempotency.window` in seconds; the configuration was validated at startup, so it parses. */
export function idempotencyWindowSeconds(config: IdempotencyConfig): number {
  return parseDuration(config.window);
}

/** What is wrong with the section, as the line startup prints (the field path first), or undefined. */
export function idempotencyProblem(config: IdempotencyConfig): string | undefined {
  let seconds: number;
  try {
    seconds = parseDuration(config.window);
  } catch (error) {
    return `idempotency.window: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (seconds < IDEMPOTENCY_WINDOW_MIN_SEC || seconds > IDEMPOTENCY_WINDOW_MAX_SEC) {
    return `idempotency.window: must be between 1s and 24h, got '${config.window}'`;
  }
  if (config.in_memory_max_keys <= 0) {
    return `idempotency.in_memory_max_keys: must be greater than 0, got ${config.in_memory_max_keys}`;
  }
  return undefined;
}

/** A KV bucket name nats.js and nats-server accept; it also names the stream `KV_<name>`. */
const BUCKET_NAME = /^[-\w]+$/u;

export function idempotencyBucketProblem(name: string, field = 'idempotency_bucket'): string | undefined {
  return BUCKET_NAME.test(name)
    ? undefined
    : `notification_backend.jetstream.${field}: must consist of letters, digits, '_' and '-', got '${name}'`;
}
