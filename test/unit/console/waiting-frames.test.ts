import { describe, expect, it } from 'vitest';
import { classifyFrame } from '../../../console/src/frames.js';
import { WaitingFrames, type ArrivedFrame } from '../../../console/src/waiting-frames.js';

function arrived(second: number): ArrivedFrame {
  return { frame: classifyFrame('heartbeat', `{"timestamp":"${second}"}`), arrivedAt: new Date(Date.UTC(2026, 0, 15, 10, 0, second)) };
}

describe('the frames that wait while a panel is paused', () => {
  it('are given back oldest first, each with the time it arrived, and the list starts over', () => {
    const waiting = new WaitingFrames(10);
    for (const second of [1, 2, 3]) waiting.push(arrived(second));
    expect(waiting.count).toBe(3);
    expect(waiting.take()).toEqual([arrived(1), arrived(2), arrived(3)]);
    expect(waiting.count).toBe(0);
    expect(waiting.take()).toEqual([]);
  });

  it('keeps only the newest up to the cap but counts every one that arrived', () => {
    const waiting = new WaitingFrames(2);
    for (const second of [1, 2, 3, 4, 5]) waiting.push(arrived(second));
    expect(waiting.count).toBe(5);
    expect(waiting.take().map((frame) => frame.arrivedAt.getUTCSeconds())).toEqual([4, 5]);
    expect(waiting.count).toBe(0);
  });
});
