import { randomUUID } from 'node:crypto';
import { ConfigError } from './errors.js';

/**
 * The `Idempotency-Key` a notify carries (docs/client.md "Idempotent notify"): 1 to 255 visible ASCII
 * characters. The caller's key is checked here so a typo fails before anything is sent.
 */
const KEY_FORM = /^[\x21-\x7e]{1,255}$/;

export function checkedIdempotencyKey(key: string | undefined): string {
  if (key === undefined) return randomUUID();
  if (!KEY_FORM.test(key)) throw new ConfigError('an idempotency key is 1 to 255 visible ASCII characters (no spaces)');
  return key;
}
