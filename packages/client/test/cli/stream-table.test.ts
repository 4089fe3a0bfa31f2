import { describe, expect, it } from 'vitest';
import { parseLimit } from '../../src/cli/commands/streams.js';
import { cell, streamTable, summaryLine } from '../../src/cli/stream-table.js';
import type { OpenStreamInfo, StreamList } from '../../src/index.js';

const BASE: OpenStreamInfo = {
  id: '0b9f1a8e-2f4c-4d0e-9a51-7c1e5b2d3f40',
  process: 'node-a:41',
  route: 'watch',
  method: 'POST',
  eventType: 'mars',
  filter: { class: 'od', step: { gte: 6 } },
  topicPattern: 'mars.od.*',
  user: 'alice',
  clientAddress: '10.0.0.7',
  openedAt: '2026-12-05T21:00:00.123Z',
  phase: 'live',
  lastSequence: 42,
  delivered: 7,
  bufferedBytes: 2048,
  lagMs: 1500,
};

function list(streams: OpenStreamInfo[], extra: Partial<StreamList> = {}): StreamList {
  return {
    streams,
    total: streams.length,
    truncated: false,
    counts: { mars: 2, dissemination: 1 },
    processes: { answered: ['node-a:41'], notAnswering: [], clusterUnreachable: false },
    requestId: 'r',
    ...extra,
  };
}

describe('aviso admin streams on a terminal', () => {
  it('prints one aligned row per stream, numbers on the right, then the summary', () => {
    const replay: OpenStreamInfo = {
      ...BASE,
      id: 'short',
      route: 'replay',
      method: 'GET',
      user: null,
      filter: {},
      phase: 'replaying',
      lastSequence: null,
      delivered: 0,
      bufferedBytes: 0,
      lagMs: 0,
    };
    const lines = streamTable(list([BASE, replay])).split('\n');
    expect(lines[0]).toMatch(/^ID +PROCESS +ROUTE +EVENT TYPE +FILTER +USER +CLIENT +OPENED +PHASE +LAST SEQ +DELIVERED +BUFFERED +LAG$/);
    expect(lines[1]).toBe(
      '0b9f1a8e-2f4c-4d0e-9a51-7c1e5b2d3f40  node-a:41  POST watch  mars        class=od step={"gte":6}  alice  10.0.0.7  2026-12-05 21:00:00 UTC  live             42          7   2.0 KiB  1.5 s',
    );
    expect(lines[2]).toBe(
      'short                                 node-a:41  GET replay  mars        *                        -      10.0.0.7  2026-12-05 21:00:00 UTC  replaying         -          0       0 B   0 ms',
    );
    expect(lines[3]).toBe('2 matching streams, 3 open in all (dissemination 1, mars 2)');
    expect(lines[4]).toBe('');
  });

  it('says when the limit cut the list, and prints only the summary when nothing matches', () => {
    expect(summaryLine(list([BASE], { total: 5, truncated: true }))).toBe(
      '5 matching streams, 3 open in all (dissemination 1, mars 2); showing the first 1: raise --limit or narrow the filters',
    );
    expect(streamTable(list([], { counts: {} }))).toBe('0 matching streams, 0 open in all\n');
  });

  it('escapes control characters a filter value or user name could carry', () => {
    expect(cell('a\u001b[31mb\nc')).toBe('a\\u{1b}[31mb\\u{a}c');
    expect(streamTable(list([{ ...BASE, user: 'eve\u001b[2J' }]))).not.toContain('\u001b');
  });

  it('takes --limit from 1 to 1000', () => {
    expect(parseLimit('1')).toBe(1);
    expect(parseLimit('1000')).toBe(1000);
    for (const bad of ['0', '1001', '-1', '2.5', 'ten', ''])
      expect(() => parseLimit(bad)).toThrow(/--limit must be a whole number from 1 to 1000/);
  });
});
