import type { Checkpoint, StateStore } from './store.js';

/** Cursors for the lifetime of the process (the CLI's `--no-state-store`). */
export class MemoryStore implements StateStore {
  private readonly checkpoints = new Map<string, Checkpoint>();

  get(key: string): Promise<Checkpoint | undefined> {
    return Promise.resolve(this.checkpoints.get(key));
  }

  put(key: string, checkpoint: Checkpoint): Promise<void> {
    const current = this.checkpoints.get(key);
    if (current === undefined || checkpoint.lastCommittedSequence > current.lastCommittedSequence) {
      this.checkpoints.set(key, checkpoint);
    }
    return Promise.resolve();
  }

  rewind(key: string, checkpoint: Checkpoint): Promise<void> {
    this.checkpoints.set(key, checkpoint);
    return Promise.resolve();
  }
}
