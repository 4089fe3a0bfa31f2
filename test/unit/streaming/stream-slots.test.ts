import { describe, expect, it } from 'vitest';
import { StreamSlots } from '../../../src/streaming/stream-slots.js';

describe('StreamSlots (application.max_streams, D44)', () => {
  it('gives out at most its limit, and one more once a slot is given back', () => {
    const slots = new StreamSlots(2);
    const first = slots.take();
    const second = slots.take();
    expect(first).toBeDefined();
    expect(second).toBeDefined();
    expect(slots.take()).toBeUndefined();
    expect(slots.inUse).toBe(2);
    first?.release();
    expect(slots.inUse).toBe(1);
    expect(slots.take()).toBeDefined();
    expect(slots.take()).toBeUndefined();
  });

  it('counts a slot given back twice once: a stream released by its route and its session frees one place', () => {
    const slots = new StreamSlots(1);
    const slot = slots.take();
    slot?.release();
    slot?.release();
    expect(slots.inUse).toBe(0);
    const next = slots.take();
    expect(next).toBeDefined();
    expect(slots.take()).toBeUndefined();
  });
});
