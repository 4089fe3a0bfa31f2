/** Parsing of an ECPDS `destination/list` body into a destination set (docs/design/rules/operations.md §2.10.3). */

export type DestinationList =
  | {
      readonly valid: true;
      readonly destinations: ReadonlySet<string>;
      /** Records in `destinationList`, whatever their shape. */
      readonly total: number;
      /** Records without `"active": true`, non-objects included. */
      readonly skippedInactive: number;
      /** Active records whose target field is missing or not a string. */
      readonly skippedWithoutTarget: number;
    }
  | { readonly valid: false; readonly problem: string };

export function parseDestinationList(body: string, targetField: string): DestinationList {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { valid: false, problem: 'body is not JSON' };
  }
  if (!isObject(parsed)) return { valid: false, problem: 'body is not a JSON object' };
  const list = parsed.destinationList;
  const success = parsed.success;
  if (!Array.isArray(list)) return { valid: false, problem: 'destinationList is missing or not an array' };
  if (typeof success !== 'string') return { valid: false, problem: 'success is missing or not a string' };
  // Exactly "yes": ECPDS reports failures in-band, and "YES"/"true" are not its spelling of success.
  if (success !== 'yes') return { valid: false, problem: `success is '${success}', not 'yes'` };

  const destinations = new Set<string>();
  let skippedInactive = 0;
  let skippedWithoutTarget = 0;
  for (const record of list as unknown[]) {
    // Only a literal boolean `true` counts: a truthy string or number must not widen access.
    if (!isObject(record) || record.active !== true) {
      skippedInactive += 1;
      continue;
    }
    const value = Object.hasOwn(record, targetField) ? record[targetField] : undefined;
    if (typeof value !== 'string') {
      skippedWithoutTarget += 1;
      continue;
    }
    destinations.add(value);
  }
  return { valid: true, destinations, total: list.length, skippedInactive, skippedWithoutTarget };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
