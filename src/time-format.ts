/** `YYYY-MM-DDTHH:MM:SSZ`, sub-second part truncated (api.md §2.4, streaming.md §4). */
export function formatUtcSeconds(epochMs: number): string {
  const second = Math.floor(epochMs / 1000);
  // Every log line and frame asks; within one second the text is the same.
  if (second !== lastSecond) {
    lastSecond = second;
    lastSecondText = `${new Date(second * 1000).toISOString().slice(0, 19)}Z`;
  }
  return lastSecondText;
}

let lastSecond = Number.NaN;
let lastSecondText = '';

/**
 * CloudEvent `time` (streaming.md §4): fraction printed only as needed, with 3, 6 or 9 digits.
 */
export function formatCloudEventTime(epochNs: bigint): string {
  const seconds = epochNs / 1_000_000_000n - (epochNs % 1_000_000_000n < 0n ? 1n : 0n);
  const fraction = epochNs - seconds * 1_000_000_000n;
  const whole = formatUtcSeconds(Number(seconds) * 1000).slice(0, -1);
  return `${whole}${secondFraction(Number(fraction))}Z`;
}

/** The nanoseconds of a second as chrono writes them: '', or a dot and 3, 6 or 9 digits. */
export function secondFraction(nanos: number): string {
  if (nanos === 0) return '';
  if (nanos % 1_000_000 === 0) return `.${String(nanos / 1_000_000).padStart(3, '0')}`;
  if (nanos % 1_000 === 0) return `.${String(nanos / 1_000).padStart(6, '0')}`;
  return `.${String(nanos).padStart(9, '0')}`;
}
