import { secondFraction } from '../time-format.js';

/**
 * How instants read from `from_date` / `to_date` are written back: the second-precision echo of
 * `replay_started` and the RFC 3339 form the end-point messages quote. Nanoseconds since the Unix
 * epoch in, proleptic Gregorian calendar out, for the whole range the parser accepts.
 */

const NS_PER_SECOND = 1_000_000_000n;

/** Civil date of a day count since 1970-01-01 (the inverse of Hinnant's `days_from_civil`). */
function civilFromDays(days: number): { year: number; month: number; day: number } {
  const shifted = days + 719_468;
  const era = Math.floor(shifted / 146_097);
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * shiftedMonth + 2) / 5) + 1;
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9;
  return { year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

/**
 * The `from_date` echo of `replay_started` (streaming.md §5.3): `YYYY-MM-DDTHH:MM:SSZ`, the
 * fraction dropped (floored, so instants before 1970 keep their second). Years outside 0–9999
 * carry a sign and at least four digits, as chrono's RFC 3339 writer prints them.
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

function floorDiv(dividend: bigint, divisor: bigint): bigint {
  const quotient = dividend / divisor;
  return dividend % divisor < 0n ? quotient - 1n : quotient;
}

function formatYear(year: number): string {
  if (year >= 0 && year <= 9999) return String(year).padStart(4, '0');
  return (year < 0 ? '-' : '+') + String(Math.abs(year)).padStart(4, '0');
}

function pad2(value: number): string {
  return String(value).padStart(2, '0');
}
