import { readFileSync } from 'node:fs';

/** The parts of a V8 heap snapshot (`.heapsnapshot`, JSON) that counting by constructor reads. */
export interface HeapSnapshotJson {
  readonly snapshot: { readonly meta: { readonly node_fields: readonly string[]; readonly node_types: readonly unknown[] } };
  readonly nodes: readonly number[];
  readonly strings: readonly string[];
}

/** How many heap objects of one kind, and their own bytes (not what they retain). */
export interface HeapKind {
  readonly count: number;
  readonly bytes: number;
}

/** Object kinds keyed `type:name`, e.g. `object:StreamSession`, `closure:deliver`, `object shape:system / Map`. */
export type HeapCensus = Map<string, HeapKind>;

/** A kind's name is cut to this length: long source strings are told apart by their start. */
const NAME_LENGTH = 60;

/** Counts a snapshot's objects by type and constructor (or function, or string start), with their self sizes. */
export function heapCensus(snapshot: HeapSnapshotJson): HeapCensus {
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0] as readonly string[];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  if (typeAt < 0 || nameAt < 0 || sizeAt < 0) throw new Error('not a V8 heap snapshot: node fields lack type, name or self_size');
  const census: HeapCensus = new Map();
  const { nodes, strings } = snapshot;
  for (let i = 0; i < nodes.length; i += width) {
    const key = `${types[nodes[i + typeAt] as number]}:${(strings[nodes[i + nameAt] as number] ?? '').slice(0, NAME_LENGTH)}`;
    const kind = census.get(key);
    const bytes = nodes[i + sizeAt] as number;
    census.set(key, { count: (kind?.count ?? 0) + 1, bytes: (kind?.bytes ?? 0) + bytes });
  }
  return census;
}

export function readHeapCensus(file: string): HeapCensus {
  return heapCensus(JSON.parse(readFileSync(file, 'utf8')) as HeapSnapshotJson);
}

export function totalBytes(census: HeapCensus): number {
  let total = 0;
  for (const kind of census.values()) total += kind.bytes;
  return total;
}

export interface HeapKindChange {
  readonly key: string;
  readonly count: number;
  readonly bytes: number;
}

/** What `b` holds more (or less) than `a`, kind by kind, the largest byte changes first. */
export function censusChanges(a: HeapCensus, b: HeapCensus, limit: number): HeapKindChange[] {
  const changes: HeapKindChange[] = [];
  for (const key of new Set([...a.keys(), ...b.keys()])) {
    const before = a.get(key);
    const after = b.get(key);
    const bytes = (after?.bytes ?? 0) - (before?.bytes ?? 0);
    const count = (after?.count ?? 0) - (before?.count ?? 0);
    if (bytes !== 0 || count !== 0) changes.push({ key, count, bytes });
  }
  return changes.sort((x, y) => Math.abs(y.bytes) - Math.abs(x.bytes)).slice(0, limit);
}
