import { describe, expect, it } from 'vitest';
import type { StoredNotification } from '../../../src/backend/backend.js';
import { SharedFilters, selectionKey } from '../../../src/filter/shared-filters.js';
import { compileWatchFilter, type WatchSelection } from '../../../src/filter/watch-filter.js';
import { parseJsonBody } from '../../../src/json/lossless-parse.js';
import type { JsonObject } from '../../../src/json/json-value.js';
import type { EventSchemaSource } from '../../../src/schema/event-schema.js';
import { SchemaRegistry } from '../../../src/schema/schema-registry.js';
import { StoredIdentityReader } from '../../../src/schema/stored-identifier.js';
import { checkSpatialShape, prepareWatch } from '../../../src/schema/watch-identifier.js';
import { TEST_SCHEMAS } from '../../support/schemas.js';

/** Streams with the same filter share one evaluation per notification (docs/architecture.md "Live dispatch"). */

const registry = new SchemaRegistry(TEST_SCHEMAS as unknown as Record<string, EventSchemaSource>, true);
const identities = new StoredIdentityReader(registry);

function selection(eventType: string, identifierJson: string, from: SchemaRegistry = registry): WatchSelection {
  const identifier = parseJsonBody(identifierJson) as JsonObject;
  return prepareWatch(from, 'watch', { event_type: eventType, identifier }, checkSpatialShape(identifier));
}

let sequence = 0;
function notification(severity: number): StoredNotification {
  const identifier = { region: 'north', run_time: '1200', severity: String(severity), polygon: '(50,10,52,10,52,12,50,10)' };
  return {
    sequence: ++sequence,
    topic: `extreme_event.north.1200.${severity}.%2850%2C10%2C52%2C10%2C52%2C12%2C50%2C10%29`,
    payload: 'null',
    timestampNs: 0n,
    metadata: { aviso_identifier: JSON.stringify(identifier) },
  };
}

/** `compile` for `acquire`, counting the compilations and the evaluations of what it compiled. */
function counted(chosen: WatchSelection): { compile: () => (n: StoredNotification) => boolean; compiled: number; evaluations: number } {
  const counter = {
    compiled: 0,
    evaluations: 0,
    compile: () => {
      counter.compiled++;
      const predicate = compileWatchFilter(chosen, identities);
      return (n: StoredNotification) => {
        counter.evaluations++;
        return predicate(n);
      };
    },
  };
  return counter;
}

describe('SharedFilters', () => {
  const SEVERE = '{"region":"north","run_time":"1200","severity":{"gte":3}}';

  it('compiles one predicate for streams selecting the same, and evaluates it once per notification', () => {
    const filters = new SharedFilters();
    const chosen = selection('extreme_event', SEVERE);
    const counter = counted(chosen);
    const streams = Array.from({ length: 100 }, () =>
      filters.acquire(selection('extreme_event', SEVERE), registry.get('extreme_event'), counter.compile),
    );
    expect(counter.compiled).toBe(1);
    const strong = notification(4);
    const weak = notification(1);
    expect(streams.every((stream) => stream.predicate(strong))).toBe(true);
    expect(streams.every((stream) => !stream.predicate(weak))).toBe(true);
    expect(counter.evaluations).toBe(2);
    // The same notification again after another one is evaluated again: only the last is kept.
    expect(streams[0]?.predicate(strong)).toBe(true);
    expect(counter.evaluations).toBe(3);
  });

  it('keeps filters that select differently apart', () => {
    const filters = new SharedFilters();
    const schema = registry.get('extreme_event');
    const a = filters.acquire(selection('extreme_event', SEVERE), schema, () =>
      compileWatchFilter(selection('extreme_event', SEVERE), identities),
    );
    const otherSource = '{"region":"north","run_time":"1200","severity":{"gte":5}}';
    const b = filters.acquire(selection('extreme_event', otherSource), schema, () =>
      compileWatchFilter(selection('extreme_event', otherSource), identities),
    );
    expect(filters.sizeOf(schema)).toBe(2);
    const n = notification(4);
    expect([a.predicate(n), b.predicate(n)]).toEqual([true, false]);
  });

  it('tells apart constraints, exact values and geometry that print alike elsewhere', () => {
    const keys = new Set(
      [
        '{"region":"north","run_time":"1200","severity":{"gte":3}}',
        '{"region":"north","run_time":"1200","severity":"3"}',
        '{"region":"north","run_time":"1200","severity":{"gt":3}}',
        '{"region":"north","run_time":"1200","severity":"*"}',
        '{"region":"north","run_time":"1200","severity":"*","polygon":"(50,10,52,10,52,12,50,10)"}',
        '{"region":"north","run_time":"1200","severity":"*","polygon":"(50,10,52,10,52,13,50,10)"}',
        '{"region":"north","run_time":"1200","severity":"*","point":"51,11"}',
      ].map((identifier) => selectionKey(selection('extreme_event', identifier))),
    );
    expect(keys.size).toBe(7);
  });

  it('drops a shared predicate when its last stream released it, once per stream', () => {
    const filters = new SharedFilters();
    const schema = registry.get('extreme_event');
    const compile = (): ((n: StoredNotification) => boolean) => compileWatchFilter(selection('extreme_event', SEVERE), identities);
    const first = filters.acquire(selection('extreme_event', SEVERE), schema, compile);
    const second = filters.acquire(selection('extreme_event', SEVERE), schema, compile);
    first.release();
    first.release();
    expect(filters.sizeOf(schema)).toBe(1);
    second.release();
    expect(filters.sizeOf(schema)).toBe(0);
  });

  it('never shares across a schema replaced by a reload, even for the same request', () => {
    const filters = new SharedFilters();
    const reloaded = new SchemaRegistry(TEST_SCHEMAS as unknown as Record<string, EventSchemaSource>, true);
    const before = counted(selection('extreme_event', SEVERE));
    const after = counted(selection('extreme_event', SEVERE, reloaded));
    filters.acquire(selection('extreme_event', SEVERE), registry.get('extreme_event'), before.compile);
    filters.acquire(selection('extreme_event', SEVERE, reloaded), reloaded.get('extreme_event'), after.compile);
    expect([before.compiled, after.compiled]).toEqual([1, 1]);
  });
});
