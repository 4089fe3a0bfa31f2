import type { Clock, TimerHandle } from '../../time/clock.js';
import type { DeploymentAnswer, GatheredAnswers } from '../deployment-exchange.js';

export interface GatheringOptions {
  /** The processes an answer is expected from (seen within the presence window). */
  readonly expected: readonly string[];
  readonly boundMs: number;
  /**
   * Wait for the whole bound even once every expected process answered: while this process has
   * not been up for a presence window it may not know every peer yet.
   */
  readonly waitFullBound: boolean;
  readonly settles?: (answer: DeploymentAnswer) => boolean;
}

/**
 * The answers to one question while they arrive (D49): done at the bound, or earlier once every
 * expected process answered or one answer settles the question. Answers from processes not
 * expected are kept as well (a peer whose presence has not arrived yet). Pure apart from the
 * clock's timer, so the rules are tested with a manual clock.
 */
export class AnswerGathering {
  private readonly answers = new Map<string, DeploymentAnswer>();
  private readonly expected: ReadonlySet<string>;
  private readonly timer: TimerHandle;
  private finished = false;
  private resolve!: (gathered: GatheredAnswers) => void;
  readonly result: Promise<GatheredAnswers>;

  constructor(
    clock: Clock,
    private readonly options: GatheringOptions,
  ) {
    this.expected = new Set(options.expected);
    this.result = new Promise((resolve) => (this.resolve = resolve));
    this.timer = clock.setTimeout(() => this.finish(false), options.boundMs);
    this.finishIfComplete();
  }

  get isFinished(): boolean {
    return this.finished;
  }

  /** One process's answer; a second one from the same process is ignored. */
  receive(answer: DeploymentAnswer): void {
    if (this.finished || this.answers.has(answer.process)) return;
    this.answers.set(answer.process, answer);
    if (this.options.settles?.(answer) === true) this.finish(false);
    else this.finishIfComplete();
  }

  /** The question could not reach the other processes (refused by the account, no connection). */
  unreachable(): void {
    this.finish(true);
  }

  private finishIfComplete(): void {
    if (this.options.waitFullBound) return;
    for (const process of this.expected) if (!this.answers.has(process)) return;
    this.finish(false);
  }

  private finish(unreachable: boolean): void {
    if (this.finished) return;
    this.finished = true;
    this.timer.cancel();
    this.resolve({
      answers: unreachable ? [] : [...this.answers.values()],
      notAnswering: [...this.expected].filter((process) => unreachable || !this.answers.has(process)),
      unreachable,
    });
  }
}
