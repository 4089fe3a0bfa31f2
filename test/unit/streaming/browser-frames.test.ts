import { describe, expect, it } from 'vitest';
import type { StoredNotification } from '../../../src/backend/backend.js';
import type { EventSchemaSource } from '../../../src/schema/event-schema.js';
import { SchemaRegistry } from '../../../src/schema/schema-registry.js';
import { StoredIdentityReader } from '../../../src/schema/stored-identifier.js';
import { CloudEventRenderer } from '../../../src/streaming/cloudevent.js';
import { BROWSER_RETRY_MS, positionBlock, retryBlock, sseIdLine } from '../../../src/streaming/frames.js';
import { TEST_SCHEMAS } from '../../support/schemas.js';

/** The lines a GET stream adds to the POST wire (docs/design/rules/browser.md §1). */

const registry = new SchemaRegistry(TEST_SCHEMAS as unknown as Record<string, EventSchemaSource>, false);
const renderer = () => new CloudEventRenderer(new StoredIdentityReader(registry), 'http://localhost:8000');
const notification = (): StoredNotification => ({
  sequence: 42,
  topic: 'polygon.20250706.1200',
  payload: '{"note":"a"}',
  timestampNs: 1_000_000_000n,
});

describe('GET stream frames', () => {
  it('a notification frame with id is the plain frame after an id: line holding its CloudEvent id', () => {
    const shared = renderer();
    const stored = notification();
    for (const event of ['live-notification', 'replay'] as const) {
      const plain = shared.frameBytes(stored, event).toString();
      const withId = shared.frameBytes(stored, event, 'with-id').toString();
      expect(withId).toBe(`id: test_polygon@42\n${plain}`);
      expect(JSON.parse(plain.split('data: ')[1] as string).id).toBe('test_polygon@42');
      // The plain bytes stay those of the POST wire, whichever style was rendered first.
      expect(renderer().frameBytes(notification(), event).toString()).toBe(plain);
      expect(shared.unsharedFrameBytes(notification(), event, 'with-id').toString()).toBe(withId);
    }
  });

  it('caches each style separately', () => {
    const shared = renderer();
    const stored = notification();
    const withId = shared.frameBytes(stored, 'replay', 'with-id');
    expect(shared.frameBytes(stored, 'replay', 'with-id')).toBe(withId);
    expect(shared.frameBytes(stored, 'replay')).not.toBe(withId);
  });

  it('starts with a retry block that dispatches no event', () => {
    expect(BROWSER_RETRY_MS).toBe(2000);
    expect(retryBlock()).toBe('retry: 2000\n\n');
  });

  it('marks a position with an id-only block', () => {
    expect(positionBlock('mars', 57)).toBe('id: mars@57\n\n');
    expect(positionBlock('mars', 0n)).toBe('id: mars@0\n\n');
  });

  it('writes no id line for an id that SSE cannot carry', () => {
    expect(sseIdLine('a\nb@1')).toBe('');
    expect(sseIdLine('a\rb@1')).toBe('');
    expect(sseIdLine('a\0b@1')).toBe('');
    expect(positionBlock('a\nb', 1)).toBe('');
  });
});
