import { describe, expect, it } from 'vitest';
import { AnswerGathering, type GatheringOptions } from '../../../../src/backend/deployment/answer-gathering.js';
import type { GatheredAnswers } from '../../../../src/backend/deployment-exchange.js';
import { RecentPeers } from '../../../../src/backend/deployment/recent-peers.js';
import { ManualClock } from '../../../support/manual-clock.js';

/**
 * D49's bounded gathering: the answers of the other processes are merged until every process seen
 * recently answered, one answer settles the question, or the bound passes; whoever was expected
 * and stayed silent is named. Time only moves when the test moves it.
 */

const BOUND_MS = 1_000;

function gather(clock: ManualClock, options: Partial<GatheringOptions> = {}) {
  const gathering = new AnswerGathering(clock, { expected: [], boundMs: BOUND_MS, waitFullBound: false, ...options });
  let result: GatheredAnswers | undefined;
  void gathering.result.then((gathered) => (result = gathered));
  return { gathering, result: () => result };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('AnswerGathering', () => {
  it('ends as soon as every expected process answered, keeping answers in arrival order', async () => {
    const clock = new ManualClock();
    const { gathering, result } = gather(clock, { expected: ['a:1', 'b:2'] });
    gathering.receive({ process: 'b:2', body: 'B' });
    clock.advance(10);
    await settle();
    expect(result()).toBeUndefined();
    gathering.receive({ process: 'a:1', body: 'A' });
    await settle();
    expect(result()).toEqual({
      answers: [
        { process: 'b:2', body: 'B' },
        { process: 'a:1', body: 'A' },
      ],
      notAnswering: [],
      unreachable: false,
    });
    expect(clock.pendingTimers).toBe(0);
  });

  it('names the silent processes at the bound and not a moment before', async () => {
    const clock = new ManualClock();
    const { gathering, result } = gather(clock, { expected: ['a:1', 'dead:9', 'b:2'] });
    gathering.receive({ process: 'a:1', body: 'A' });
    gathering.receive({ process: 'b:2', body: 'B' });
    clock.advance(BOUND_MS - 1);
    await settle();
    expect(result()).toBeUndefined();
    clock.advance(1);
    await settle();
    expect(result()).toEqual({
      answers: [
        { process: 'a:1', body: 'A' },
        { process: 'b:2', body: 'B' },
      ],
      notAnswering: ['dead:9'],
      unreachable: false,
    });
  });

  it('keeps an answer from a process it did not expect, once per process, and nothing after it ended', async () => {
    const clock = new ManualClock();
    const { gathering, result } = gather(clock, { expected: ['a:1'] });
    gathering.receive({ process: 'new:3', body: 'N' });
    gathering.receive({ process: 'new:3', body: 'again' });
    gathering.receive({ process: 'a:1', body: 'A' });
    gathering.receive({ process: 'late:4', body: 'L' });
    await settle();
    expect(result()?.answers).toEqual([
      { process: 'new:3', body: 'N' },
      { process: 'a:1', body: 'A' },
    ]);
  });

  it('waits the whole bound while the peers may not all be known yet', async () => {
    const clock = new ManualClock();
    const { gathering, result } = gather(clock, { expected: ['a:1'], waitFullBound: true });
    gathering.receive({ process: 'a:1', body: 'A' });
    await settle();
    expect(result()).toBeUndefined();
    clock.advance(BOUND_MS);
    await settle();
    expect(result()).toEqual({ answers: [{ process: 'a:1', body: 'A' }], notAnswering: [], unreachable: false });
  });

  it('ends with no process expected at once, unless it must wait the bound', async () => {
    const clock = new ManualClock();
    const alone = gather(clock);
    await settle();
    expect(alone.result()).toEqual({ answers: [], notAnswering: [], unreachable: false });
    const young = gather(clock, { waitFullBound: true });
    await settle();
    expect(young.result()).toBeUndefined();
  });

  it('ends at the first answer that settles the question', async () => {
    const clock = new ManualClock();
    const { gathering, result } = gather(clock, { expected: ['a:1', 'b:2', 'c:3'], settles: (answer) => answer.body === 'mine' });
    gathering.receive({ process: 'a:1', body: 'not mine' });
    gathering.receive({ process: 'b:2', body: 'mine' });
    await settle();
    expect(result()?.answers.map((answer) => answer.process)).toEqual(['a:1', 'b:2']);
    expect(gathering.isFinished).toBe(true);
    expect(clock.pendingTimers).toBe(0);
  });

  it('ends unreachable with no answers and every expected process named', async () => {
    const clock = new ManualClock();
    const { gathering, result } = gather(clock, { expected: ['a:1', 'b:2'] });
    gathering.receive({ process: 'a:1', body: 'A' });
    gathering.unreachable();
    gathering.receive({ process: 'b:2', body: 'B' });
    await settle();
    expect(result()).toEqual({ answers: [], notAnswering: ['a:1', 'b:2'], unreachable: true });
  });
});

describe('RecentPeers', () => {
  it('remembers a process for the window after its last word and forgets it once it left', () => {
    const peers = new RecentPeers(6_000);
    peers.seen('a:1', 0);
    peers.seen('b:2', 1_000);
    peers.seen('a:1', 2_000);
    expect(peers.recent(2_000)).toEqual(['b:2', 'a:1']);
    expect(peers.recent(7_000)).toEqual(['b:2', 'a:1']);
    expect(peers.recent(7_001)).toEqual(['a:1']);
    peers.seen('c:3', 7_500);
    peers.left('a:1');
    expect(peers.recent(7_500)).toEqual(['c:3']);
    expect(peers.recent(13_501)).toEqual([]);
  });
});
