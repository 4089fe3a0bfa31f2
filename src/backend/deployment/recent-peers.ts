/**
 * The other processes of the deployment this process has heard of recently (their presence
 * announcements and their answers), so that an asker knows whom to expect an answer from and can
 * name those that stayed silent (D49). A process is forgotten once it said it is leaving (a clean
 * shutdown) or after the presence window without a word (a process killed, a network cut off).
 */
export class RecentPeers {
  private readonly lastSeen = new Map<string, number>();

  constructor(private readonly windowMs: number) {}

  seen(process: string, nowMs: number): void {
    // Re-inserted so that the map stays in order of the last word heard.
    this.lastSeen.delete(process);
    this.lastSeen.set(process, nowMs);
  }

  left(process: string): void {
    this.lastSeen.delete(process);
  }

  /** The processes heard of within the window, oldest word first; forgets the others. */
  recent(nowMs: number): string[] {
    for (const [process, at] of this.lastSeen) {
      if (nowMs - at <= this.windowMs) break;
      this.lastSeen.delete(process);
    }
    return [...this.lastSeen.keys()];
  }
}
