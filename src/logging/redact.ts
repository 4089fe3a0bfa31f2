/**
 * Log redaction (docs/design/rules/operations.md §3.4.1): secret-looking keys lose their values, URLs lose their
 * user info, and free text loses `password=…`, `token: …` and `Bearer …` values.
 */

const REDACTED = '[REDACTED]';
const SECRET_KEY = /password|secret|token|authorization|api_key/i;
const URL_USER_INFO = /([a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/gi;
const FREE_TEXT_SECRETS = /\b(password|token)(\s*[=:]\s*)[^\s,;&"']+/gi;
const BEARER = /\b(bearer)\s+[A-Za-z0-9._~+/=-]+/gi;

/** Anything one of the replacements below could touch; most strings fail this one test. */
const MAYBE_SECRET = /:\/\/[^/@\s]+@|password|token|bearer/i;

export function redactText(text: string): string {
  if (!MAYBE_SECRET.test(text)) return text;
  return text.replace(URL_USER_INFO, `$1${REDACTED}@`).replace(FREE_TEXT_SECRETS, `$1$2${REDACTED}`).replace(BEARER, `$1 ${REDACTED}`);
}

/** A copy with every secret key's value and every string redacted, however deeply nested. */
export function redactValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactText(value);
  if (depth > 16 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => redactValue(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) out[key] = redactField(key, item, depth + 1);
  return out;
}

/**
 * The value of field `key` redacted as `redactValue` redacts a field of an object at `depth − 1`:
 * for callers that build the object themselves (the log formatter), so it is not copied twice.
 */
export function redactField(key: string, value: unknown, depth = 1): unknown {
  return isSecretKey(key) ? REDACTED : redactValue(value, depth);
}

/**
 * Log lines use a few dozen field names again and again; the answers for the first ones seen are
 * kept (bounded, as field names inside logged values may be anything).
 */
const SECRET_KEY_ANSWERS = new Map<string, boolean>();
const SECRET_KEY_ANSWERS_LIMIT = 512;

function isSecretKey(key: string): boolean {
  let answer = SECRET_KEY_ANSWERS.get(key);
  if (answer === undefined) {
    answer = SECRET_KEY.test(key);
    if (SECRET_KEY_ANSWERS.size < SECRET_KEY_ANSWERS_LIMIT) SECRET_KEY_ANSWERS.set(key, answer);
  }
  return answer;
}
