import { describe, expect, it } from 'vitest';
import { RateLimitedLine } from '../../../src/logging/rate-limited-line.js';

describe('RateLimitedLine (a refusal flood logs one line per interval)', () => {
  it('logs the first occurrence at once, then counts until the interval has passed', () => {
    let now = 1_000;
    const line = new RateLimitedLine(10_000, () => now);
    expect(line.occurred()).toBe(1);
    now += 1;
    expect(line.occurred()).toBe(0);
    now += 5_000;
    expect(line.occurred()).toBe(0);
    now += 4_999;
    // 10,000 ms after the last line: this one stands for itself and the two only counted.
    expect(line.occurred()).toBe(3);
    expect(line.occurred()).toBe(0);
  });

  it('writes one line per interval whatever the rate, and the lines add up to every occurrence', () => {
    let now = 0;
    const line = new RateLimitedLine(10_000, () => now);
    const lines: number[] = [];
    // 100 occurrences a second for 60 s.
    for (let tick = 0; tick < 6_000; tick++) {
      const count = line.occurred();
      if (count > 0) lines.push(count);
      now += 10;
    }
    expect(lines).toHaveLength(6);
    expect(lines[0]).toBe(1);
    // The occurrences after the last line wait for the next one; the metric has them meanwhile.
    expect(lines.reduce((sum, count) => sum + count, 0)).toBe(5_001);
  });
});
