import { TopicDecodeError, decodeToken, encodeToken, encodeTopic } from './percent-codec.js';

/** The wildcard token of watch/replay patterns: the position of a field left out, given as `*`, constrained by an object or spatial. */
export const WILDCARD = '*';

/**
 * A watch/replay topic pattern: decoded tokens where `*` means "any value". Built by the
 * identifier layer; backends and the streaming layer only match against it.
 */
export class TopicPattern {
  readonly tokens: readonly string[];

  constructor(tokens: readonly string[]) {
    if (tokens.length === 0) throw new Error('a topic pattern needs at least the base token');
    this.tokens = tokens;
  }

  get base(): string {
    return this.tokens[0] as string;
  }

  /** Wire form (`*` encoded as `%2A` like any value). */
  get wire(): string {
    return encodeTopic(this.tokens);
  }

  /** Decoded tokens joined by `.` as shown in SSE `topic` fields, e.g. `polygon.*.1200`. */
  get display(): string {
    return this.tokens.join('.');
  }

  /**
   * NATS subject filter that is a superset of the pattern: the tokens before the first wildcard, then
   * `.>`, and `matches` decides exactly (docs/design/rules/backends.md §2.3). It always ends
   * in `.>`, so it never matches a bare-base topic: backends match those explicitly (D19).
   */
  get coarseSubject(): string {
    const tokens = this.tokens;
    const firstWildcard = tokens.indexOf(WILDCARD);
    if (firstWildcard >= 0) {
      const prefix = firstWildcard > 1 ? tokens.slice(0, firstWildcard) : tokens.slice(0, 1);
      return `${encodeTopic(prefix)}.>`;
    }
    if (tokens.length > 1) return `${encodeTopic(tokens.slice(0, -1))}.>`;
    return `${encodeToken(this.base)}.>`;
  }

  /** Exact match: same token count, every pattern token `*` or equal to the decoded token. */
  matches(wireTopic: string): boolean {
    // Token by token without splitting, so a mismatch stops early; a token without `%` is its own
    // decoded form, so only escaped tokens are decoded (and an undecodable one never matches).
    const tokens = this.tokens;
    let start = 0;
    for (let i = 0; i < tokens.length; i++) {
      const dot = wireTopic.indexOf('.', start);
      const last = i === tokens.length - 1;
      if (last ? dot !== -1 : dot === -1) return false;
      const end = last ? wireTopic.length : dot;
      const percent = wireTopic.indexOf('%', start);
      const expected = tokens[i] as string;
      if (percent === -1 || percent >= end) {
        if (expected !== WILDCARD && (end - start !== expected.length || !wireTopic.startsWith(expected, start))) return false;
      } else {
        let decoded: string;
        try {
          decoded = decodeToken(wireTopic.slice(start, end));
        } catch (error) {
          if (error instanceof TopicDecodeError) return false;
          throw error;
        }
        if (expected !== WILDCARD && decoded !== expected) return false;
      }
      start = end + 1;
    }
    return true;
  }

  matchesTokens(candidate: readonly string[]): boolean {
    if (candidate.length !== this.tokens.length) return false;
    for (let i = 0; i < candidate.length; i++) {
      const expected = this.tokens[i];
      if (expected !== WILDCARD && expected !== candidate[i]) return false;
    }
    return true;
  }
}
