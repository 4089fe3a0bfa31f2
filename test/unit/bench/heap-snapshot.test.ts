import { describe, expect, it } from 'vitest';
import { censusChanges, heapCensus, totalBytes, type HeapSnapshotJson } from '../../../bench/support/heap-snapshot.js';

/** A snapshot in V8's layout: flat node records of the fields `meta.node_fields` names, names as string indexes. */
function snapshot(objects: readonly (readonly [type: string, name: string, bytes: number])[]): HeapSnapshotJson {
  const types = ['hidden', 'array', 'string', 'object', 'code', 'closure'];
  const strings: string[] = [];
  const nodes: number[] = [];
  for (const [id, [type, name, bytes]] of objects.entries()) {
    let nameIndex = strings.indexOf(name);
    if (nameIndex < 0) nameIndex = strings.push(name) - 1;
    // type, name, id, self_size, edge_count, trace_node_id, detachedness
    nodes.push(types.indexOf(type), nameIndex, id * 2 + 1, bytes, 0, 0, 0);
  }
  return {
    snapshot: {
      meta: {
        node_fields: ['type', 'name', 'id', 'self_size', 'edge_count', 'trace_node_id', 'detachedness'],
        node_types: [types, 'string'],
      },
    },
    nodes,
    strings,
  };
}

describe('heap census', () => {
  it('counts objects by type and name with their own bytes', () => {
    const census = heapCensus(
      snapshot([
        ['object', 'StreamSession', 200],
        ['object', 'StreamSession', 200],
        ['closure', 'deliver', 56],
        ['string', 'x'.repeat(100), 120],
      ]),
    );
    expect(census.get('object:StreamSession')).toEqual({ count: 2, bytes: 400 });
    expect(census.get('closure:deliver')).toEqual({ count: 1, bytes: 56 });
    expect(census.get(`string:${'x'.repeat(60)}`)).toEqual({ count: 1, bytes: 120 });
    expect(totalBytes(census)).toBe(576);
  });

  it('lists what the second build holds more or less, the largest byte change first, unchanged kinds left out', () => {
    const before = heapCensus(
      snapshot([
        ['object', 'Session', 100],
        ['closure', 'deliver', 56],
        ['object', 'Kept', 10],
      ]),
    );
    const after = heapCensus(
      snapshot([
        ['object', 'Session', 100],
        ['object', 'LivePhase', 88],
        ['object', 'LivePhase', 88],
        ['object', 'Kept', 10],
      ]),
    );
    expect(censusChanges(before, after, 10)).toEqual([
      { key: 'object:LivePhase', count: 2, bytes: 176 },
      { key: 'closure:deliver', count: -1, bytes: -56 },
    ]);
    expect(censusChanges(before, after, 1)).toHaveLength(1);
  });

  it('refuses a file that is not a heap snapshot', () => {
    expect(() => heapCensus({ snapshot: { meta: { node_fields: ['id'], node_types: [[]] } }, nodes: [], strings: [] })).toThrow(
      /not a V8 heap snapshot/,
    );
  });
});
