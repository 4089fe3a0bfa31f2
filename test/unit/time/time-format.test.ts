import { describe, expect, it } from 'vitest';
import { formatCloudEventTime, formatUtcSeconds } from '../../../src/time/time-format.js';

describe('formatUtcSeconds', () => {
  it('truncates to whole seconds with a Z suffix', () => {
    expect(formatUtcSeconds(Date.UTC(2026, 2, 4, 10, 0, 0, 999))).toBe('2026-03-04T10:00:00Z');
  });
});

describe('formatCloudEventTime', () => {
  const base = BigInt(Date.UTC(2026, 1, 25, 18, 58, 23)) * 1_000_000n;
  it.each([
    [0n, '2026-02-25T18:58:23Z'],
    [710_000_000n, '2026-02-25T18:58:23.710Z'],
    [710_810_000n, '2026-02-25T18:58:23.710810Z'],
    [710_810_413n, '2026-02-25T18:58:23.710810413Z'],
  ])('prints a fraction of %s ns only as precisely as needed', (fraction, text) => {
    expect(formatCloudEventTime(base + fraction)).toBe(text);
  });
});
