/**
 * The history-gap example of docs/client.md: replay from sequence 1 and keep what the server says
 * it no longer stores. packages/client/test/e2e/example.test.ts imports this file and runs it
 * against the real in-memory server.
 */
import { AvisoClient, type Identifier } from '@aviso-ts/client';

export interface ReplayReport {
  readonly sequences: number[];
  /** One line per gap or reset, in stream order, including one after the last notification. */
  readonly warnings: string[];
  /** The notifications that came right after lost history. */
  readonly afterGap: number[];
}

export async function replayWithGaps(baseUrl: string, eventType: string, identifier: Identifier): Promise<ReplayReport> {
  const report: ReplayReport = { sequences: [], warnings: [], afterGap: [] };
  const stream = new AvisoClient({ baseUrl }).watch({
    eventType,
    identifier,
    from: { fromId: 1 },
    replayOnly: true,
    // Called when the loop reaches a gap or a reset, before the notification after it.
    onStatus: (status) => {
      if (status.type === 'historyGap') report.warnings.push(`gap: ${status.gap.message}`);
      if (status.type === 'sequenceReset') report.warnings.push(`reset: ${status.reset.message}`);
    },
  });
  for await (const n of stream) {
    report.sequences.push(n.sequence);
    // The same notices, attached to the notification that follows them.
    if (n.notices?.some((notice) => notice.type === 'history_gap')) report.afterGap.push(n.sequence);
  }
  return report;
}
