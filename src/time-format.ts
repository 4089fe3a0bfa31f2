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
  if (fraction === 0n) return `${whole}Z`;
  const nanos = fraction.toString().padStart(9, '0');
  if (nanos.endsWith('000000')) return `${whole}.${nanos.slice(0, 3)}Z`;
  if (nanos.endsWith('000')) return `${whole}.${nanos.slice(0, 6)}Z`;
  return `${whole}.${nanos}Z`;
}
