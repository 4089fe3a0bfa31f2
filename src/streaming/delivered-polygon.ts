import { canonicalPairs, parsedCoordinate } from '../schema/handlers/coordinates.js';
import type { LatLon } from '../schema/handlers/field-handler.js';
import { createPolygonHandler } from '../schema/handlers/polygon-handler.js';
import { IdentifierError } from '../schema/identifier-error.js';
import { trimRust } from '../text/rust-whitespace.js';

/**
 * A stored polygon as a CloudEvent carries it (D27, docs/design/rules/reference-0.13.md §3): always the canonical
 * `[[lat,lon],…]` array of numbers. Notify writes that array into the identifier header today,
 * but older stored notifications keep the legacy text: aviso-ts before D27 kept the producer's
 * text in the header, and the reference's own notifications only have the `spatial_geometry`
 * text. Those are turned into the array here, at render time, once per notification.
 */

// The field name only appears in error messages, which are discarded here.
const polygonHandler = createPolygonHandler('polygon');

/**
 * Arrays are returned as they are: the header is read with the native parser, so their numbers
 * are plain and render canonically. A text no reading understands stays text rather than
 * failing the delivery.
 */
export function deliveredPolygon(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  return strictPairs(value) ?? lenientPairs(value) ?? value;
}

/** Text that notify accepts today, in any of its forms. */
function strictPairs(text: string): readonly (readonly number[])[] | undefined {
  try {
    return polygonHandler.parse(text).canonical;
  } catch (error) {
    if (error instanceof IdentifierError) return undefined;
    throw error;
  }
}

/**
 * What the reference 0.7.1 accepted and may have stored: any run of outer parentheses, and rings
 * of 3 pairs. Every value must still be a finite number in pairs.
 */
function lenientPairs(text: string): number[][] | undefined {
  let inner = trimRust(text);
  while (inner.startsWith('(')) inner = inner.slice(1);
  while (inner.endsWith(')')) inner = inner.slice(0, -1);
  const tokens = inner.split(',');
  if (tokens.length < 2 || tokens.length % 2 !== 0) return undefined;
  const pairs: LatLon[] = [];
  for (let i = 0; i < tokens.length; i += 2) {
    const lat = parsedCoordinate(trimRust(tokens[i] as string));
    const lon = parsedCoordinate(trimRust(tokens[i + 1] as string));
    if (lat === undefined || lon === undefined || !Number.isFinite(lat) || !Number.isFinite(lon)) return undefined;
    pairs.push([lat, lon]);
  }
  return canonicalPairs(pairs);
}
