import type { ClassifiedFrame } from './frames.js';

/** A frame with the time it arrived, which is the time the panel shows, even after a pause. */
export interface ArrivedFrame {
  readonly frame: ClassifiedFrame;
  readonly arrivedAt: Date;
}

/**
 * The frames that arrive while a panel is paused (docs/console.md "Streams", **Pause**): only the newest
 * `cap` are kept, since the panel shows no more than that anyway, but every one is counted, so
 * "Resume (N waiting)" stays right however long the pause. Pure: no DOM.
 */
export class WaitingFrames {
  private kept: ArrivedFrame[] = [];
  private arrived = 0;

  constructor(private readonly cap: number) {}

  /** How many frames arrived since the last `take`, kept or not. */
  get count(): number {
    return this.arrived;
  }

  push(frame: ArrivedFrame): void {
    this.arrived += 1;
    this.kept.push(frame);
    if (this.kept.length > this.cap) this.kept.shift();
  }

  /** The kept frames, oldest first, and starts over empty. */
  take(): ArrivedFrame[] {
    const kept = this.kept;
    this.kept = [];
    this.arrived = 0;
    return kept;
  }
}
