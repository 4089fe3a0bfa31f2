import { civilFromDays, floorDiv, formatYear, pad2 } from './calendar.js';

const NS_PER_SECOND = 1_000_000_000n;

/** `YYYY-MM-DDTHH:MM:SSZ`, sub-second part truncated: the timestamps of frames and log lines. */
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
 * CloudEvent `time` (docs/streaming.md "What arrives"): fraction printed only as needed, with 3, 6
 * or 9 digits.
 */
export function formatCloudEventTime(epochNs: bigint): string {
  const seconds = floorDiv(epochNs, NS_PER_SECOND);
  const fraction = epochNs - seconds * NS_PER_SECOND;
  const whole = formatUtcSeconds(Number(seconds) * 1000).slice(0, -1);
  return `${whole}${secondFraction(Number(fraction))}Z`;
}

/** RFC 3339 with all nine digits of nanoseconds, as JetStream's `opt_start_time` takes it. */
export function formatRfc3339Nanos(epochNs: bigint): string {
  const seconds = floorDiv(epochNs, NS_PER_SECOND);
  const nanos = epochNs - seconds * NS_PER_SECOND;
  const whole = formatUtcSeconds(Number(seconds) * 1000).slice(0, -1);
  return `${whole}.${nanos.toString().padStart(9, '0')}Z`;
}

/** The nanoseconds of a second as chrono writes them: '', or a dot and 3, 6 or 9 digits. */
function secondFraction(nanos: number): string {
  if (nanos === 0) return '';
  if (nanos % 1_000_000 === 0) return `.${String(nanos / 1_000_000).padStart(3, '0')}`;
  if (nanos % 1_000 === 0) return `.${String(nanos / 1_000).padStart(6, '0')}`;
  return `.${String(nanos).padStart(9, '0')}`;
}

/**
 * The `from_date` echo of `replay_started` (docs/streaming.md "What arrives"):
 * `YYYY-MM-DDTHH:MM:SSZ`, the fraction dropped (floored, so instants before 1970 keep their
 * second). Years outside 0–9999 carry a sign and at least four digits, as chrono's RFC 3339 writer
 * prints them. Unlike `formatUtcSeconds`, it covers the whole range `from_date` and `to_date`
 * accept.
 */
export function formatFromDateEcho(atNs: bigint): string {
  const seconds = floorDiv(atNs, NS_PER_SECOND);
  const days = floorDiv(seconds, 86_400n);
  const secondOfDay = Number(seconds - days * 86_400n);
  const { year, month, day } = civilFromDays(Number(days));
  const hour = Math.floor(secondOfDay / 3600);
  const minute = Math.floor((secondOfDay % 3600) / 60);
  const second = secondOfDay % 60;
  return `${formatYear(year)}-${pad2(month)}-${pad2(day)}T${pad2(hour)}:${pad2(minute)}:${pad2(second)}Z`;
}

/**
 * An instant as the reference's end-point messages quote it (chrono's `to_rfc3339`): like the echo,
 * but with `+00:00` and the fraction of a second, when there is one, in 3, 6 or 9 digits.
 */
export function formatRfc3339Utc(atNs: bigint): string {
  const nanos = Number(atNs - floorDiv(atNs, NS_PER_SECOND) * NS_PER_SECOND);
  return `${formatFromDateEcho(atNs).slice(0, -1)}${secondFraction(nanos)}+00:00`;
}
